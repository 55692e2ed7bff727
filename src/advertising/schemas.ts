/** JSON Schemas of the advertising and recommendation responses (docs/advertising.md). */
import { adSchema, episodeReferenceSchema, podcastReferenceSchema, topicSchema } from '../catalog/schemas.ts';
import { companyCompactSchema } from '../knowledge/company-compact.ts';

const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const num = { type: 'number' } as const;
const bool = { type: 'boolean' } as const;
const time = { type: 'string', format: 'date-time' } as const;
const date = { type: 'string', format: 'date' } as const;
const band = { enum: ['strong', 'moderate', 'weak'] } as const;

const sponsorSchema = {
  type: 'object',
  required: ['id', 'name', 'ad_count', 'podcast_reach', 'episode_reach'],
  properties: {
    id: str,
    name: str,
    ad_count: int,
    podcast_reach: int,
    episode_reach: int,
    first_seen_at: time,
    last_seen_at: time,
    company: companyCompactSchema,
  },
} as const;

export const leaderboardEntrySchema = {
  type: 'object',
  required: ['rank', 'sponsor'],
  properties: { rank: int, sponsor: sponsorSchema },
} as const;

const bucketSchema = {
  type: 'object',
  required: ['start', 'count', 'host_read_count', 'pre_recorded_count'],
  properties: { start: date, count: int, host_read_count: int, pre_recorded_count: int },
} as const;

export const timeseriesSchema = {
  type: 'object',
  required: [
    'interval',
    'start',
    'end',
    'buckets',
    'total_ads',
    'host_read_count',
    'pre_recorded_count',
    'distinct_episodes',
    'distinct_podcasts',
  ],
  properties: {
    sponsor_id: str,
    company_id: str,
    company_slug: str,
    interval: { enum: ['day', 'week', 'month'] },
    start: date,
    end: date,
    buckets: { type: 'array', items: bucketSchema },
    total_ads: int,
    host_read_count: int,
    pre_recorded_count: int,
    distinct_episodes: int,
    distinct_podcasts: int,
  },
} as const;

export const placedAdSchema = {
  type: 'object',
  required: adSchema.required,
  properties: { ...adSchema.properties, episode: episodeReferenceSchema },
} as const;

export const companyAdvertisingSchema = {
  type: 'object',
  required: [
    'company_id',
    'total_ads',
    'podcast_reach',
    'episode_reach',
    'read_type_breakdown',
    'placement_breakdown',
    'recent_ads',
  ],
  properties: {
    company_id: str,
    company_slug: str,
    company: companyCompactSchema,
    total_ads: int,
    podcast_reach: int,
    episode_reach: int,
    read_type_breakdown: { type: 'object', properties: { host_read: int, pre_recorded: int } },
    placement_breakdown: { type: 'object', properties: { pre_roll: int, mid_roll: int, post_roll: int } },
    recent_ads: { type: 'array', items: placedAdSchema },
  },
} as const;

export const podcastAdvertisingSchema = {
  type: 'object',
  required: ['podcast_id', 'total_ads', 'sponsors', 'recent_ads'],
  properties: {
    podcast_id: str,
    total_ads: int,
    sponsors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['sponsor', 'ad_count'],
        properties: {
          sponsor: {
            type: 'object',
            required: ['id', 'name'],
            properties: { id: str, name: str, company: companyCompactSchema },
          },
          ad_count: int,
          first_seen_at: time,
          last_seen_at: time,
        },
      },
    },
    recent_ads: { type: 'array', items: placedAdSchema },
  },
} as const;

const personSchema = {
  type: 'object',
  required: ['id', 'name'],
  properties: { id: str, name: str, description: str, image_url: str, slug: str },
} as const;

const componentsSchema = {
  type: 'object',
  additionalProperties: num,
} as const;

export const relatedPodcastSchema = {
  type: 'object',
  required: ['band', 'score', 'podcast', 'basis'],
  properties: {
    band,
    score: num,
    podcast: podcastReferenceSchema,
    basis: {
      type: 'object',
      properties: {
        same_publisher: bool,
        shared_category_count: int,
        shared_guest_count: int,
        shared_sponsor_count: int,
        content_similarity: num,
        topic_overlap: num,
        shared_guests: { type: 'array', items: personSchema },
        shared_topics: { type: 'array', items: topicSchema },
        components: componentsSchema,
      },
    },
  },
} as const;

export const relatedEpisodeSchema = {
  type: 'object',
  required: ['band', 'score', 'episode', 'basis'],
  properties: {
    band,
    score: num,
    episode: episodeReferenceSchema,
    basis: {
      type: 'object',
      properties: {
        same_podcast: bool,
        same_publisher: bool,
        shared_guest_count: int,
        shared_sponsor_count: int,
        topic_overlap: num,
        shared_guests: { type: 'array', items: personSchema },
        shared_topics: { type: 'array', items: topicSchema },
        components: componentsSchema,
      },
    },
  },
} as const;

const viaSchema = { type: 'array', items: podcastReferenceSchema } as const;

export const guestRecommendationSchema = {
  type: 'object',
  required: ['band', 'score', 'shared_show_count', 'person', 'via'],
  properties: { band, score: num, shared_show_count: int, person: personSchema, via: viaSchema },
} as const;

export const sponsorRecommendationSchema = {
  type: 'object',
  required: ['band', 'score', 'shared_show_count', 'total_ads', 'sponsor', 'contacts', 'via'],
  properties: {
    band,
    score: num,
    shared_show_count: int,
    total_ads: int,
    last_ad_at: time,
    sponsor: {
      type: 'object',
      required: ['id', 'name'],
      properties: { id: str, name: str, company: companyCompactSchema },
    },
    contacts: {
      type: 'array',
      items: {
        type: 'object',
        required: ['person', 'role'],
        properties: { person: personSchema, role: str, contact_profile_url: str, title: str },
      },
    },
    via: viaSchema,
  },
} as const;

export const podcastRecommendationSchema = {
  type: 'object',
  required: ['band', 'score', 'shared_show_count', 'podcast', 'via'],
  properties: { band, score: num, shared_show_count: int, podcast: podcastReferenceSchema, via: viaSchema },
} as const;

/** The fields the advertising surface adds to GET /v1/podcasts/{id}. */
export const podcastExtraProperties = {
  related: { type: 'array', items: relatedPodcastSchema },
  recommended_guests: { type: 'array', items: guestRecommendationSchema },
  recommended_sponsors: { type: 'array', items: sponsorRecommendationSchema },
} as const;
