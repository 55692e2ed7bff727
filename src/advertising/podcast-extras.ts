import { adsProjection } from '../../projections/ads/projection.ts';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { podcastFormatsProjection } from '../../projections/podcast-formats/projection.ts';
import { podcastLinksProjection } from '../../projections/podcast-links/projection.ts';
import { podcastsProjection } from '../../projections/podcasts/projection.ts';
import { podcastExtras as load } from './recommendations.ts';
import { podcastExtraProperties } from './schemas.ts';

/**
 * The fields the advertising surface adds to GET /v1/podcasts/{id}: their schema, their loader and
 * every read model they come from (links, shows and their episode counts, ads, entities), which
 * the catalog's response cache checks before serving a kept answer (docs/catalog.md).
 */
export const advertisingPodcastExtras = {
  properties: podcastExtraProperties,
  load,
  readModels: [
    podcastLinksProjection,
    podcastsProjection,
    podcastFormatsProjection,
    adsProjection,
    entitiesProjection,
  ],
};
