import type { CatalogTopic, EpisodeAd, EpisodeVideo } from '../ingestion/catalog-events.ts';
import type { SourcePopularity } from './popularity.ts';
import type { SpeakerRole } from './roles.ts';

/**
 * Ingestion payloads as producers send them (contracts §2). Field names are the wire names;
 * everything not listed as required there is optional.
 */
export type EntityType = 'PERSON' | 'COMPANY' | 'KNOWLEDGE_GRAPH_ENTITY';

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
    company?: { domain?: string; ticker?: string };
    person?: { title?: string; company?: string };
  };
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

export type AlertKind = 'ENTITY_MENTION' | 'PODCAST_SPEAKER';

export interface AlertFilters {
  /** ISO 639-1 codes; matched on the episode's primary language subtag. */
  languages?: readonly string[];
  /** PODCAST_SPEAKER only: the linked speaker's role must be one of these. */
  speaker_roles?: readonly SpeakerRole[];
  /** RELEVANT: only on_target mentions count. Default ALL. */
  relevance?: 'RELEVANT' | 'ALL';
  /** Any of the tiers. */
  source_popularity?: readonly SourcePopularity[];
}

/** An active alert as the matcher sees it; paused and deleted alerts are not watched. */
export interface WatchedAlert {
  alertId: string;
  projectId: string;
  organizationId: string;
  kind: AlertKind;
  entityId: string;
  entityType: EntityType;
  filters: AlertFilters;
}

/** Window line (interface spec "Window"). */
export interface WindowLine {
  number: number;
  start_seconds: number;
  end_seconds: number;
  text: string;
  is_mention: boolean;
  role?: SpeakerRole;
  speaker?: string;
}

/** A transcript window around mention lines (contracts §4), with the segment and clip it falls in. */
export interface MatchWindow {
  start_seconds: number;
  end_seconds: number;
  lines: WindowLine[];
  segment_id?: string;
  segment_title?: string;
  segment_description?: string;
  segment_summary?: string;
  segment_type?: string;
  clip_id?: string;
  clip_title?: string;
  clip_description?: string;
  clip_intro_statement?: string;
  clip_type?: string;
}

/** The data of one match: what becomes the AlertMatched event. */
export interface AlertMatchedData {
  matchId: string;
  alertId: string;
  projectId: string;
  kind: AlertKind;
  entityId: string;
  entityType: EntityType;
  sourceId: string;
  sourceType: 'EPISODE';
  detectedAt: string;
  mentionCount: number;
  mentionVariants: string[];
  relevance: MentionRelevance;
  roles: SpeakerRole[];
  windows: MatchWindow[];
  truncated: boolean;
  isBackfilled: boolean;
}
