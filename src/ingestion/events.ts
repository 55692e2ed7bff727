import { uuidFromName } from '../ids.ts';
import type { EntityUpserted, EpisodeTranscribed } from '../matching/types.ts';
import { chartKey, type RankingCaptured } from './ranking-captured.ts';

export type { EntityUpserted, EpisodeTranscribed, RankingCaptured };

/** An event as a producer sends it (contracts.md §2). */
export type IngestEvent = EntityUpserted | EpisodeTranscribed | RankingCaptured;

/** The stored event type of each producer event type. */
export const STORED_TYPE = {
  'entity.upserted': 'EntityUpserted',
  'episode.transcribed': 'EpisodeTranscribed',
  'ranking.captured': 'RankingCaptured',
} as const satisfies Record<IngestEvent['type'], string>;

export const entityStream = (entityId: string) => `entity-${entityId}`;
export const episodeStream = (episodeId: string) => `episode-${episodeId}`;
export const chartStream = (key: string) => `chart-${key}`;

export const streamOf = (event: IngestEvent) =>
  event.type === 'entity.upserted'
    ? entityStream(event.entity.id)
    : event.type === 'ranking.captured'
      ? chartStream(chartKey(event.chart))
      : episodeStream(event.episode.id);

/**
 * The stored event id of a producer's event_id: a UUID derived from it, so a repeated event_id
 * is the same stored event (a no-op) and every event store adapter accepts it.
 */
export const storedEventId = (producerEventId: string) => uuidFromName(`earshot:ingest:${producerEventId}`);
