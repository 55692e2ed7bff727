import { clipSchema, instant, segmentSchema } from '../catalog/schemas.ts';
import { pageQuery } from '../http/pagination.ts';
import { episodeBlockSchema, windowSchema } from '../matching/http/match-resource.ts';
import { diagnosticsSchema } from './diagnostics.ts';
import { MAX_TERMS } from './keywords.ts';
import { ENTITY_TYPES } from './references.ts';
import { INTERVALS, MAX_BUCKETS } from './timeseries.ts';

/** JSON Schemas of the search surface (docs/search.md). */
const str = { type: 'string' } as const;
const num = { type: 'number' } as const;
const int = { type: 'integer' } as const;
const ref = (description: string) => ({ type: 'string', minLength: 1, maxLength: 200, description }) as const;

const entityParams = {
  entity_id: ref('A knowledge-graph entity id.'),
  entity_slug: ref('An entity slug (person, company or other entity).'),
  person_slug: ref("A person's slug."),
  company_slug: ref("A company's knowledge-graph slug."),
} as const;

const scopeParams = {
  ...entityParams,
  role: {
    type: 'string',
    maxLength: 40,
    description: 'Speaker role of the entity (one of 14, case-insensitive); needs an entity.',
  },
  podcast_id: ref('Podcast id, slug or Apple id.'),
  episode_id: ref('Episode id or slug.'),
  language: {
    type: 'string',
    pattern: '^[A-Za-z]{2}$',
    description: 'ISO 639-1 code, matched on the primary subtag.',
  },
  since: { ...instant, description: 'Published at or after (date or date-time, UTC).' },
  until: { ...instant, description: 'Published before (date or date-time, UTC).' },
} as const;

const searchParams = {
  keyword_search: {
    type: 'string',
    minLength: 1,
    maxLength: 500,
    description: `Every word must occur in one passage of at most 5 lines; "quoted phrases" exactly. At most ${MAX_TERMS} terms.`,
  },
  keyword_match: {
    type: 'string',
    enum: ['all', 'ranked'],
    default: 'all',
    description: 'ranked: words rank instead of filtering.',
  },
  semantic_search: {
    type: 'string',
    minLength: 1,
    maxLength: 500,
    pattern: '\\S',
    description:
      'Passages close in meaning (no shared words needed). With keyword_search: the episodes matching both, ranked by reciprocal rank fusion.',
  },
  entity_type: { type: 'string', maxLength: 40, description: ENTITY_TYPES.join(', ') },
  ...scopeParams,
} as const;

const intervalParam = {
  interval: {
    type: 'string',
    enum: [...INTERVALS],
    default: 'week',
    description: `UTC buckets, weeks from Monday; at most ${MAX_BUCKETS}.`,
  },
} as const;

export const searchQuerySchema = {
  type: 'object',
  properties: {
    ...searchParams,
    sort: { type: 'string', enum: ['relevance', 'recency'], default: 'relevance' },
    ...pageQuery,
  },
} as const;

export const episodeTimeseriesQuerySchema = {
  type: 'object',
  properties: { ...searchParams, ...intervalParam },
} as const;

const mentionParams = {
  ...scopeParams,
  company_id: ref(
    'A company: entity id, company.id, domain (any case; scheme, www. and path ignored) or entity slug.',
  ),
} as const;

export const mentionsQuerySchema = {
  type: 'object',
  properties: {
    ...mentionParams,
    context_lines: {
      type: 'integer',
      minimum: 0,
      maximum: 20,
      default: 2,
      description: 'Lines either side of each mention line.',
    },
    ...pageQuery,
  },
} as const;

export const mentionsTimeseriesQuerySchema = {
  type: 'object',
  properties: { ...mentionParams, ...intervalParam },
} as const;

const searchEpisodeSchema = {
  ...episodeBlockSchema,
  required: ['id', ...episodeBlockSchema.required],
  properties: { id: str, ...episodeBlockSchema.properties },
} as const;

const searchWindowSchema = {
  type: 'object',
  required: ['start_seconds', 'end_seconds', 'lines'],
  properties: {
    start_seconds: num,
    end_seconds: num,
    lines: {
      type: 'array',
      items: {
        type: 'object',
        required: ['number', 'start_seconds', 'end_seconds', 'text', 'is_match'],
        properties: {
          number: int,
          speaker: str,
          role: str,
          start_seconds: num,
          end_seconds: num,
          text: str,
          is_match: { type: 'boolean' },
        },
      },
    },
  },
} as const;

export const searchPageSchema = {
  type: 'object',
  required: ['data', 'has_more'],
  properties: {
    data: {
      type: 'array',
      items: {
        type: 'object',
        required: ['episode', 'windows', 'clips', 'match', 'truncated'],
        properties: {
          episode: searchEpisodeSchema,
          segment: segmentSchema,
          windows: { type: 'array', items: searchWindowSchema },
          truncated: { type: 'boolean' },
          clips: { type: 'array', items: clipSchema },
          match: {
            type: 'object',
            required: ['source', 'relevance_score'],
            properties: {
              source: { type: 'string', enum: ['keyword', 'semantic', 'hybrid'] },
              relevance_score: num,
            },
          },
        },
      },
    },
    has_more: { type: 'boolean' },
    cursor: str,
    diagnostics: diagnosticsSchema,
  },
} as const;

export const mentionsPageSchema = {
  type: 'object',
  required: ['entity', 'data', 'has_more'],
  properties: {
    entity: {
      type: 'object',
      required: ['id', 'name', 'slug', 'entity_type'],
      properties: { id: str, name: str, slug: str, entity_type: str },
    },
    data: {
      type: 'array',
      items: {
        type: 'object',
        required: ['episode', 'mention_count', 'mention_variants', 'windows', 'truncated'],
        properties: {
          episode: searchEpisodeSchema,
          mention_count: int,
          mention_variants: { type: 'array', items: str },
          windows: { type: 'array', items: windowSchema },
          truncated: { type: 'boolean' },
        },
      },
    },
    has_more: { type: 'boolean' },
    cursor: str,
    diagnostics: diagnosticsSchema,
  },
} as const;

export const timeseriesSchema = {
  type: 'object',
  required: ['interval', 'start', 'end', 'buckets', 'total_episodes', 'total_mentions'],
  properties: {
    interval: { type: 'string', enum: [...INTERVALS] },
    start: { type: 'string', format: 'date-time' },
    end: { type: 'string', format: 'date-time' },
    buckets: {
      type: 'array',
      items: {
        type: 'object',
        required: ['start', 'episode_count', 'mention_count'],
        properties: {
          start: { type: 'string', format: 'date-time' },
          episode_count: int,
          mention_count: int,
        },
      },
    },
    total_episodes: int,
    total_mentions: int,
  },
} as const;
