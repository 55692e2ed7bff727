import { adsProjection } from '../../projections/ads/projection.ts';
import { catalogEpisodesProjection } from '../../projections/catalog-episodes/projection.ts';
import { clipsProjection } from '../../projections/clips/projection.ts';
import { podcastFormatsProjection } from '../../projections/podcast-formats/projection.ts';
import { podcastsProjection } from '../../projections/podcasts/projection.ts';
import { segmentsProjection } from '../../projections/segments/projection.ts';
import { transcriptsProjection } from '../../projections/transcripts/projection.ts';
import type { Capability } from '../runtime.ts';
import type { Projection } from '../subscriptions/projection.ts';
import { episodeRoutes } from './episode-routes.ts';
import { PodcastItems } from './podcast-items.ts';
import { PodcastListIndex } from './podcast-list-index.ts';
import { type PodcastRouteDeps, podcastRoutes } from './podcast-routes.ts';
import { responseCache } from './response-cache.ts';
import { segmentClipRoutes } from './segment-clip-routes.ts';
import { transcriptCache } from './transcript-cache.ts';

/**
 * Live, the catalog's read models take episodes in batches gathered over this long: none of them
 * is on the way from an episode to its alerts, and each batch costs a transaction and a read of
 * the episodes' whole payloads (docs/operations.md, "Scheduling").
 */
const CATALOG_BATCH_DELAY_MS = 250;

export const catalogProjections: Projection[] = [
  podcastsProjection,
  catalogEpisodesProjection,
  transcriptsProjection,
  segmentsProjection,
  clipsProjection,
  adsProjection,
  podcastFormatsProjection,
].map((projection) => ({
  ...projection,
  batchDelayMs: CATALOG_BATCH_DELAY_MS,
}));

/**
 * EARSHOT_CATALOG_CACHE_MB's, EARSHOT_CATALOG_TRANSCRIPTS_MB's, EARSHOT_CATALOG_ITEMS_MB's and
 * EARSHOT_CATALOG_LIST_MB's defaults.
 */
const DEFAULT_CACHE_BYTES = 64 * 2 ** 20;
const DEFAULT_TRANSCRIPTS_BYTES = 64 * 2 ** 20;
const DEFAULT_ITEMS_BYTES = 32 * 2 ** 20;
const DEFAULT_LIST_BYTES = 64 * 2 ** 20;

/** The podcast catalog (docs/catalog.md): podcasts, episodes, transcripts, segments, clips, format profiles. */
export function catalogCapability(
  deps: PodcastRouteDeps & {
    cacheBytes?: number;
    transcriptsBytes?: number;
    itemsBytes?: number;
    listBytes?: number;
  },
): Capability {
  const transcripts = transcriptCache(deps.transcriptsBytes ?? DEFAULT_TRANSCRIPTS_BYTES);
  const cache = responseCache({
    maxBytes: deps.cacheBytes ?? DEFAULT_CACHE_BYTES,
    now: deps.now,
    projections: catalogProjections,
  });
  return {
    name: 'catalog',
    routes: [
      podcastRoutes(
        deps,
        cache,
        new PodcastItems(
          deps.itemsBytes ?? DEFAULT_ITEMS_BYTES,
          new PodcastListIndex(deps.listBytes ?? DEFAULT_LIST_BYTES),
        ),
      ),
      episodeRoutes(transcripts, cache),
      segmentClipRoutes(transcripts),
    ],
    projections: catalogProjections,
  };
}
