import { uuidFromName } from '../ids.ts';
import type { CatalogTopic, EpisodeAd, EpisodeVideo, PodcastUpserted, ReadType } from './catalog-events.ts';
import { chartKey, type RankingCaptured } from './ranking-captured.ts';

export type { PodcastUpserted, RankingCaptured };

/**
 * Ingestion payloads as producers send them (docs/matching.md and docs/kafka.md). Field names are the wire names;
 * everything not listed as required there is optional. Every other capability imports them from here.
 */
export const ENTITY_TYPES = ['PERSON', 'COMPANY', 'KNOWLEDGE_GRAPH_ENTITY'] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

export interface EntityUpserted {
  type: 'entity.upserted';
  event_id: string;
  occurred_at: string;
  entity: {
    id: string;
    slug: string;
    name: string;
    entity_type: EntityType;
    aliases?: string[];
    description?: string;
    image_url?: string;
    wikipedia_url?: string;
    company?: {
      /** The producer's own company id; it addresses the company as well (docs/knowledge-graph.md). */
      id?: string;
      domain?: string;
      ticker?: string;
      cik?: string;
      qid?: string;
      description?: string;
      image_url?: string;
      image_mode?: 'AUTOMATIC' | 'CUSTOM' | 'NONE';
    };
    person?: {
      title?: string;
      company?: string;
      image_url?: string;
      current_role?: PersonRole;
      roles?: PersonRole[];
    };
    external_links?: { platform: string; identifier?: string; url?: string }[];
  };
}

/** A person's role at a company; `current_role` has no `ended_at`. */
export interface PersonRole {
  company?: string;
  title?: string;
  started_at?: string;
  ended_at?: string;
}

export interface TranscriptLine {
  number: number;
  speaker_id?: string;
  speaker?: string;
  role?: string;
  start_seconds: number;
  end_seconds: number;
  text: string;
}

export interface EpisodeSpeaker {
  id?: string;
  name?: string;
  role?: string;
  entity_id?: string;
  person_id?: string;
  speaking_duration_seconds?: number;
  /** Who the speaker is, in a sentence or two. */
  description?: string;
  /** A short label, e.g. "CEO of NVIDIA". */
  descriptor?: string;
}

export type MentionRelevance = 'on_target' | 'incidental';

export interface ProducerMention {
  entity_id: string;
  entity_type?: EntityType;
  lines?: number[];
  variants?: string[];
  relevance?: MentionRelevance;
}

export interface EpisodeSegment {
  id: string;
  title?: string;
  type?: string;
  number?: number;
  start_line?: number;
  end_line?: number;
  start_seconds?: number;
  end_seconds?: number;
  description?: string;
  summary?: string;
  audio_url?: string;
  read_type?: ReadType;
}

export interface EpisodeClip {
  id: string;
  title?: string;
  type?: string;
  start_seconds?: number;
  end_seconds?: number;
  engagement_score?: number;
  description?: string;
  intro_statement?: string;
  speaker_id?: string;
  audio_url?: string;
  segment_id?: string;
}

export interface EpisodeTranscribed {
  type: 'episode.transcribed';
  event_id: string;
  occurred_at: string;
  podcast: {
    id: string;
    title: string;
    slug?: string;
    language?: string;
    image_url?: string;
    url?: string;
    apple_podcasts_url?: string;
    popularity?: number;
    bias?: string;
    explicit?: boolean;
    publisher?: { id?: string; name?: string; slug?: string };
  };
  episode: {
    id: string;
    title: string;
    published_at: string;
    duration_seconds: number;
    slug?: string;
    description?: string;
    language?: string;
    audio_url?: string;
    image_url?: string;
    url?: string;
    apple_podcasts_url?: string;
    explicit?: boolean;
    episode_number?: number;
    topics?: CatalogTopic[];
    videos?: EpisodeVideo[];
  };
  speakers?: EpisodeSpeaker[];
  transcript?: { language?: string; lines?: TranscriptLine[] };
  mentions?: ProducerMention[];
  segments?: EpisodeSegment[];
  clips?: EpisodeClip[];
  ads?: EpisodeAd[];
}

/** An event as a producer sends it (docs/ingestion.md). */
export type IngestEvent = EntityUpserted | EpisodeTranscribed | PodcastUpserted | RankingCaptured;

/** The stored event type of each producer event type. */
export const STORED_TYPE = {
  'entity.upserted': 'EntityUpserted',
  'episode.transcribed': 'EpisodeTranscribed',
  'podcast.upserted': 'PodcastUpserted',
  'ranking.captured': 'RankingCaptured',
} as const satisfies Record<IngestEvent['type'], string>;

export const entityStream = (entityId: string) => `entity-${entityId}`;
export const episodeStream = (episodeId: string) => `episode-${episodeId}`;
export const podcastStream = (podcastId: string) => `podcast-${podcastId}`;
export const chartStream = (key: string) => `chart-${key}`;

export const streamOf = (event: IngestEvent) =>
  event.type === 'entity.upserted'
    ? entityStream(event.entity.id)
    : event.type === 'podcast.upserted'
      ? podcastStream(event.podcast.id)
      : event.type === 'ranking.captured'
        ? chartStream(chartKey(event.chart))
        : episodeStream(event.episode.id);

/**
 * The stored event id of a producer's event_id: a UUID derived from it, so a repeated event_id
 * is the same stored event (a no-op) and every event store adapter accepts it.
 */
export const storedEventId = (producerEventId: string) => uuidFromName(`earshot:ingest:${producerEventId}`);
