import { entitySchema } from '../entities/view.ts';

/** JSON Schemas of the catalog's responses and shared parameters (docs/catalog.md). */
const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const num = { type: 'number' } as const;
const bool = { type: 'boolean' } as const;
const time = { type: 'string', format: 'date-time' } as const;

export const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;

/** ISO 8601 date (midnight UTC) or date-time. */
export const instant = {
  type: 'string',
  maxLength: 40,
  anyOf: [{ format: 'date' }, { format: 'date-time' }],
} as const;

export const publisherSchema = { type: 'object', properties: { id: str, name: str, slug: str } } as const;

export const topicSchema = {
  type: 'object',
  required: ['id', 'name'],
  properties: { id: str, name: str, slug: str, ancestry: str, ancestry_path: str, episode_count: int },
} as const;

export const podcastReferenceSchema = {
  type: 'object',
  required: ['id', 'title'],
  properties: {
    id: str,
    title: str,
    slug: str,
    image_url: str,
    popularity: num,
    publisher: publisherSchema,
    best_rank: {
      type: 'object',
      description:
        "The show's best rank in the charts' latest captures (the least rank, then the least chart key); absent when it is on none.",
      required: ['captured_at', 'chart_type', 'rank', 'source', 'country'],
      properties: {
        captured_at: time,
        chart_type: str,
        rank: int,
        source: str,
        category_slug: str,
        country: str,
      },
    },
  },
} as const;

export const compactFormatSchema = {
  type: 'object',
  properties: {
    has_video: bool,
    avg_episode_minutes: num,
    episodes_per_week: num,
    guest_frequency: str,
    has_ads: bool,
    publishing_status: str,
    signals: { type: 'array', items: str },
  },
} as const;

export const podcastSchema = {
  type: 'object',
  required: ['id', 'title', 'explicit'],
  properties: {
    id: str,
    title: str,
    explicit: bool,
    slug: str,
    description: str,
    url: str,
    image_url: str,
    language: str,
    bias: str,
    political_context: str,
    suitability_tier: str,
    episode_count: int,
    popularity: num,
    match_quality: { enum: ['exact', 'prefix', 'fuzzy', 'description'] },
    publisher: publisherSchema,
    feed_url: str,
    directory_ids: { type: 'object', additionalProperties: str },
    topics: { type: 'array', items: topicSchema },
    format: compactFormatSchema,
  },
} as const;

const days = Object.fromEntries(
  ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'].map((d) => [d, int]),
);

export const formatSchema = {
  type: 'object',
  required: [
    'analyzed_episodes',
    'episode_count',
    'ad_episode_rate',
    'call_in_episode_rate',
    'guest_episode_rate',
    'panel_episode_rate',
    'has_video',
    'publish_days',
    'computed_at',
  ],
  properties: {
    analyzed_episodes: int,
    episode_count: int,
    ad_episode_rate: num,
    call_in_episode_rate: num,
    guest_episode_rate: num,
    panel_episode_rate: num,
    has_video: bool,
    publish_days: { type: 'object', properties: days },
    computed_at: time,
    avg_episode_minutes: num,
    episode_minutes_median: num,
    episode_minutes_p25: num,
    episode_minutes_p75: num,
    episodes_per_week: num,
    first_episode_published_at: time,
    latest_episode_published_at: time,
    guest_frequency: { enum: ['never', 'rare', 'occasional', 'regular', 'always'] },
    has_ads: bool,
    publishing_status: { enum: ['active', 'dormant'] },
    signals: { type: 'array', items: { enum: ['interview', 'panel', 'call_in', 'solo_narrated'] } },
  },
} as const;

export const episodeSpeakerSchema = {
  type: 'object',
  properties: {
    association_id: str,
    name: str,
    description: str,
    descriptor: str,
    role: str,
    speaking_duration_seconds: int,
    entity: entitySchema,
    person: entitySchema,
  },
} as const;

export const podcastSpeakerSchema = {
  type: 'object',
  required: ['role', 'occurrences'],
  properties: { name: str, role: str, occurrences: int, entity: entitySchema },
} as const;

export const transcriptLineSchema = {
  type: 'object',
  required: ['number', 'start_seconds', 'end_seconds', 'text'],
  properties: { number: int, speaker: str, role: str, start_seconds: num, end_seconds: num, text: str },
} as const;

export const transcriptSchema = {
  type: 'object',
  required: ['episode_id', 'excerpt', 'lines'],
  properties: {
    episode_id: str,
    language: str,
    duration_seconds: num,
    excerpt: bool,
    segment_id: str,
    segment_start_seconds: num,
    segment_end_seconds: num,
    clip_id: str,
    lines: { type: 'array', items: transcriptLineSchema },
    turns: {
      type: 'array',
      items: {
        type: 'object',
        required: ['start_seconds', 'end_seconds', 'text', 'first_line', 'last_line'],
        properties: {
          speaker: str,
          role: str,
          start_seconds: num,
          end_seconds: num,
          first_line: int,
          last_line: int,
          text: str,
        },
      },
    },
  },
} as const;

export const episodeReferenceSchema = {
  type: 'object',
  required: ['id', 'title'],
  properties: { id: str, title: str, slug: str, published_at: time, podcast: podcastReferenceSchema },
} as const;

export const segmentSchema = {
  type: 'object',
  required: ['id', 'title', 'type', 'number', 'start_seconds', 'end_seconds', 'duration_seconds'],
  properties: {
    id: str,
    title: str,
    type: str,
    number: int,
    start_seconds: num,
    end_seconds: num,
    duration_seconds: num,
    description: str,
    summary: str,
    audio_url: str,
    read_type: str,
    start_line: int,
    end_line: int,
    episode: episodeReferenceSchema,
  },
} as const;

export const clipSchema = {
  type: 'object',
  required: ['id', 'title', 'start_seconds', 'end_seconds', 'duration_seconds', 'engagement_score'],
  properties: {
    id: str,
    title: str,
    start_seconds: num,
    end_seconds: num,
    duration_seconds: num,
    engagement_score: int,
    description: str,
    audio_url: str,
    intro_statement: str,
    type: str,
    episode: episodeReferenceSchema,
    segment: { type: 'object', properties: { id: str, title: str, type: str } },
    speaker: {
      type: 'object',
      properties: { name: str, role: str, entity: entitySchema, person: entitySchema },
    },
  },
} as const;

/** The company an ad's sponsor is linked to: its slug and name when the knowledge graph knows it. */
const companyRefSchema = {
  type: 'object',
  required: ['id'],
  properties: { id: str, slug: str, name: str },
} as const;

export const adSchema = {
  type: 'object',
  required: ['id', 'sponsor', 'is_network_promo'],
  properties: {
    id: str,
    sponsor: { type: 'object', required: ['name'], properties: { id: str, name: str, company_id: str } },
    product: str,
    offer_description: str,
    sponsor_url: str,
    read_type: str,
    placement_type: str,
    start_seconds: num,
    end_seconds: num,
    is_network_promo: bool,
    company: companyRefSchema,
  },
} as const;

const videoSchema = {
  type: 'object',
  required: ['url'],
  properties: { url: str, platform: str, mime_type: str, duration_seconds: num, width: int, height: int },
} as const;

export const episodeSchema = {
  type: 'object',
  required: ['id', 'title', 'duration_seconds', 'explicit', 'has_transcript'],
  properties: {
    id: str,
    title: str,
    duration_seconds: int,
    explicit: bool,
    has_transcript: bool,
    slug: str,
    description: str,
    audio_url: str,
    image_url: str,
    language: str,
    url: str,
    episode_number: int,
    entity_count: int,
    clip_count: int,
    segment_count: int,
    published_at: time,
    podcast: podcastReferenceSchema,
    topics: { type: 'array', items: topicSchema },
    videos: { type: 'array', items: videoSchema },
    speakers: { type: 'array', items: episodeSpeakerSchema },
    segments: { type: 'array', items: segmentSchema },
    clips: { type: 'array', items: clipSchema },
    transcript: transcriptSchema,
    ads: { type: 'array', items: adSchema },
  },
} as const;
