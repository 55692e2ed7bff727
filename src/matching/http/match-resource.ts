import { str, strings } from '../../http/route-schemas.ts';
import type { AlertMatchedEventData, MatchEpisodeBlock } from '../streams.ts';
import type { MatchWindow } from '../types.ts';

/** A match as the per-alert list shows it (docs/matching-pipeline.md, Matches read model and endpoints: no episode block, no windows). */
export interface MatchListItem {
  id: string;
  alert_id: string;
  /** Deprecated alias of alert_id. */
  monitor_id: string;
  kind: string;
  entity_id: string;
  entity_type: string;
  source_id: string;
  source_type: string;
  detected_at: string;
  mention_count: number;
  is_backfilled: boolean;
  mention_variants: string[];
  relevance: string;
  roles: string[];
  truncated: boolean;
  llm_summary?: string;
}

export interface MatchDelivery {
  id: string;
  channel: string;
  status: string;
  created_at: string;
  sent_at?: string;
  error_message?: string;
}

/** A match with its episode block and windows (single-match read). */
export interface MatchResource extends MatchListItem {
  episode: MatchEpisodeBlock;
  windows: MatchWindow[];
  deliveries: MatchDelivery[];
}

export function matchListItem(
  data: Omit<AlertMatchedEventData, 'windows' | 'episode'>,
  llmSummary: string | null | undefined,
): MatchListItem {
  const item: MatchListItem = {
    id: data.matchId,
    alert_id: data.alertId,
    monitor_id: data.alertId,
    kind: data.kind,
    entity_id: data.entityId,
    entity_type: data.entityType,
    source_id: data.sourceId,
    source_type: data.sourceType,
    detected_at: data.detectedAt,
    mention_count: data.mentionCount,
    is_backfilled: data.isBackfilled,
    mention_variants: data.mentionVariants,
    relevance: data.relevance,
    roles: data.roles,
    truncated: data.truncated,
  };
  if (llmSummary) item.llm_summary = llmSummary;
  return item;
}

export function matchResource(
  data: AlertMatchedEventData,
  llmSummary: string | null | undefined,
  deliveries: MatchDelivery[],
): MatchResource {
  return { ...matchListItem(data, llmSummary), episode: data.episode, windows: data.windows, deliveries };
}

export const episodeBlockSchema = {
  type: 'object',
  required: ['podcast_id', 'podcast_title', 'title', 'duration_seconds', 'published_at'],
  properties: {
    podcast_id: str,
    podcast_title: str,
    title: str,
    slug: str,
    podcast_slug: str,
    audio_url: str,
    apple_podcasts_url: str,
    image_url: str,
    podcast_image_url: str,
    duration_seconds: { type: 'number' },
    explicit: { type: 'boolean' },
    published_at: { type: 'string', format: 'date-time' },
    podcast_bias: str,
    podcast_popularity: { type: 'number' },
    podcast_popularity_badge: { type: 'string', enum: ['Top Podcast', 'Very Popular', 'Popular'] },
  },
} as const;

export const windowSchema = {
  type: 'object',
  required: ['start_seconds', 'end_seconds', 'lines'],
  properties: {
    start_seconds: { type: 'number' },
    end_seconds: { type: 'number' },
    lines: {
      type: 'array',
      items: {
        type: 'object',
        required: ['number', 'start_seconds', 'end_seconds', 'text', 'is_mention'],
        properties: {
          number: { type: 'integer' },
          start_seconds: { type: 'number' },
          end_seconds: { type: 'number' },
          text: str,
          is_mention: { type: 'boolean' },
          role: str,
          speaker: str,
        },
      },
    },
    segment_id: str,
    segment_title: str,
    segment_description: str,
    segment_summary: str,
    segment_type: str,
    clip_id: str,
    clip_title: str,
    clip_description: str,
    clip_intro_statement: str,
    clip_type: str,
  },
} as const;

const listItemProperties = {
  id: str,
  alert_id: str,
  monitor_id: { type: 'string', description: 'Deprecated alias of alert_id.' },
  kind: { type: 'string', enum: ['ENTITY_MENTION', 'PODCAST_SPEAKER'] },
  entity_id: str,
  entity_type: str,
  source_id: str,
  source_type: str,
  detected_at: { type: 'string', format: 'date-time' },
  mention_count: { type: 'integer' },
  is_backfilled: { type: 'boolean' },
  mention_variants: strings,
  relevance: { type: 'string', enum: ['on_target', 'incidental'] },
  roles: strings,
  truncated: { type: 'boolean' },
  llm_summary: { type: 'string', description: 'Written asynchronously; absent until the summarizer ran.' },
} as const;

const listItemRequired = [
  'id',
  'alert_id',
  'monitor_id',
  'kind',
  'entity_id',
  'entity_type',
  'source_id',
  'source_type',
  'detected_at',
  'mention_count',
  'is_backfilled',
  'mention_variants',
  'relevance',
  'roles',
  'truncated',
] as const;

export const matchListItemSchema = {
  $id: 'AlertMatchListItem',
  type: 'object',
  required: listItemRequired,
  properties: listItemProperties,
} as const;

export const matchDeliverySchema = {
  type: 'object',
  required: ['id', 'channel', 'status', 'created_at'],
  properties: {
    id: str,
    channel: str,
    status: str,
    created_at: { type: 'string', format: 'date-time' },
    sent_at: { type: 'string', format: 'date-time' },
    error_message: str,
  },
} as const;

export const matchResourceSchema = {
  $id: 'AlertMatch',
  type: 'object',
  required: [...listItemRequired, 'episode', 'windows', 'deliveries'],
  properties: {
    ...listItemProperties,
    episode: episodeBlockSchema,
    windows: { type: 'array', items: windowSchema },
    deliveries: { type: 'array', items: matchDeliverySchema },
  },
} as const;
