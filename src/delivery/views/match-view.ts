import type { MatchedData } from '../matched.ts';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Key order of an object and of the objects under some of its keys (arrays: of each item). */
export interface Shape {
  keys: readonly string[];
  nested?: Readonly<Record<string, Shape>>;
}

/**
 * Plain JSON with a fixed key order: the shape's keys first, in that order, then any others
 * sorted (recursively). Storage may reorder object keys (jsonb does), so everything serialized
 * for a webhook body goes through here to come out byte-identical on every rebuild.
 */
export function ordered(value: unknown, shape?: Shape): Json {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((item) => ordered(item, shape));
  if (typeof value !== 'object') return value as Json;
  const source = value as Record<string, unknown>;
  const keys = shape?.keys ?? [];
  const rest = Object.keys(source)
    .filter((key) => !keys.includes(key))
    .sort();
  const out: Record<string, Json> = {};
  for (const key of [...keys, ...rest]) {
    if (source[key] !== undefined) out[key] = ordered(source[key], shape?.nested?.[key]);
  }
  return out;
}

export const EPISODE_KEYS = [
  'podcast_id',
  'podcast_title',
  'title',
  'slug',
  'podcast_slug',
  'audio_url',
  'apple_podcasts_url',
  'image_url',
  'podcast_image_url',
  'duration_seconds',
  'explicit',
  'published_at',
  'podcast_bias',
  'podcast_popularity',
  'podcast_popularity_badge',
] as const;

const WINDOW_SHAPE: Shape = {
  keys: [
    'start_seconds',
    'end_seconds',
    'lines',
    'clip_id',
    'clip_title',
    'clip_description',
    'clip_intro_statement',
    'clip_type',
    'segment_id',
    'segment_title',
    'segment_description',
    'segment_summary',
    'segment_type',
  ],
  nested: {
    lines: { keys: ['number', 'start_seconds', 'end_seconds', 'text', 'is_mention', 'role', 'speaker'] },
  },
};

export const episodeBlock = (match: MatchedData) => ordered(match.episode ?? {}, { keys: EPISODE_KEYS });

export const windowsOf = (match: MatchedData) => ordered(match.windows ?? [], WINDOW_SHAPE);

/** The compact match of the per-alert delivery list (docs/delivery.md, Reading deliveries). */
export function compactMatch(match: MatchedData) {
  return {
    detected_at: match.detectedAt,
    entity_id: match.entityId,
    entity_type: match.entityType,
    id: match.matchId,
    kind: match.kind,
    mention_count: match.mentionCount,
    source_id: match.sourceId,
    source_type: match.sourceType,
  };
}

/** The public match: entity and episode metadata, no internal fields. */
export function publicMatch(match: MatchedData) {
  return {
    id: match.matchId,
    kind: match.kind,
    entity_id: match.entityId,
    entity_type: match.entityType,
    source_id: match.sourceId,
    source_type: match.sourceType,
    detected_at: match.detectedAt,
    mention_count: match.mentionCount,
    episode: episodeBlock(match),
  };
}

/**
 * The full match (alert match with episode block), as the webhook body and members' detailed
 * view carry it. Built only from the AlertMatched data and a summary recorded with the delivery.
 */
export function fullMatch(
  match: MatchedData,
  options: { summary?: string | undefined; windows?: boolean } = {},
) {
  const full: Record<string, Json> = {
    id: match.matchId,
    alert_id: match.alertId,
    monitor_id: match.alertId,
    kind: match.kind,
    entity_id: match.entityId,
    entity_type: match.entityType,
    source_id: match.sourceId,
    source_type: match.sourceType,
    detected_at: match.detectedAt,
    mention_count: match.mentionCount,
    episode: episodeBlock(match),
    is_backfilled: match.isBackfilled,
  };
  if (options.summary !== undefined) full.llm_summary = options.summary;
  full.mention_variants = ordered(match.mentionVariants ?? []);
  full.relevance = match.relevance;
  full.roles = ordered(match.roles ?? []);
  full.truncated = match.truncated ?? false;
  if (options.windows !== false) full.windows = windowsOf(match) as Json;
  return full;
}
