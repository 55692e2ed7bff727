import { adsProjection } from '../../projections/ads/projection.ts';
import { catalogEpisodesProjection } from '../../projections/catalog-episodes/projection.ts';
import { clipsProjection } from '../../projections/clips/projection.ts';
import { podcastFormatsProjection } from '../../projections/podcast-formats/projection.ts';
import { podcastsProjection } from '../../projections/podcasts/projection.ts';
import { segmentsProjection } from '../../projections/segments/projection.ts';
import { transcriptsProjection } from '../../projections/transcripts/projection.ts';
import type { Capability } from '../runtime.ts';
import { episodeRoutes } from './episode-routes.ts';
import { type PodcastRouteDeps, podcastRoutes } from './podcast-routes.ts';
import { segmentClipRoutes } from './segment-clip-routes.ts';
import { transcriptCache } from './transcript-cache.ts';

export const catalogProjections = [
  podcastsProjection,
  catalogEpisodesProjection,
  transcriptsProjection,
  segmentsProjection,
  clipsProjection,
  adsProjection,
  podcastFormatsProjection,
];

/** The podcast catalog (docs/catalog.md): podcasts, episodes, transcripts, segments, clips, format profiles. */
export function catalogCapability(deps: PodcastRouteDeps): Capability {
  const transcripts = transcriptCache();
  return {
    name: 'catalog',
    routes: [podcastRoutes(deps), episodeRoutes(transcripts), segmentClipRoutes(transcripts)],
    projections: catalogProjections,
  };
}
