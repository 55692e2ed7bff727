import { uuidFromName } from '../ids.ts';
import type { EntityUpserted, EpisodeTranscribed } from '../matching/types.ts';
import type { PodcastUpserted } from './catalog-events.ts';

export type { EntityUpserted, EpisodeTranscribed, PodcastUpserted };

/** An event as a producer sends it (contracts.md §2). */
export type IngestEvent = EntityUpserted | EpisodeTranscribed | PodcastUpserted;

/** The stored event type of each producer event type. */
export const STORED_TYPE = {
  'entity.upserted': 'EntityUpserted',
  'episode.transcribed': 'EpisodeTranscribed',
  'podcast.upserted': 'PodcastUpserted',
} as const satisfies Record<IngestEvent['type'], string>;

export const entityStream = (entityId: string) => `entity-${entityId}`;
export const episodeStream = (episodeId: string) => `episode-${episodeId}`;
export const podcastStream = (podcastId: string) => `podcast-${podcastId}`;

export const streamOf = (event: IngestEvent) =>
  event.type === 'entity.upserted'
    ? entityStream(event.entity.id)
    : event.type === 'podcast.upserted'
      ? podcastStream(event.podcast.id)
      : episodeStream(event.episode.id);

/**
 * The stored event id of a producer's event_id: a UUID derived from it, so a repeated event_id
 * is the same stored event (a no-op) and every event store adapter accepts it.
 */
export const storedEventId = (producerEventId: string) => uuidFromName(`earshot:ingest:${producerEventId}`);
