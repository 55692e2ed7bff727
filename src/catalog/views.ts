import type { AdRow } from '../../projections/ads/queries.ts';
import type { EpisodeRow, PodcastSpeakerRow } from '../../projections/catalog-episodes/queries.ts';
import { catalogEpisodesByIds } from '../../projections/catalog-episodes/queries.ts';
import { chartCapturesProjection } from '../../projections/chart_captures/projection.ts';
import type { BestRankRow } from '../../projections/chart_captures/queries.ts';
import type { ClipRow } from '../../projections/clips/queries.ts';
import type {
  CompactFormatRow,
  FormatRow,
  PodcastReferenceRow,
  PodcastRow,
  TopicRow,
} from '../../projections/podcasts/queries.ts';
import { podcastsByIds } from '../../projections/podcasts/queries.ts';
import type { SegmentRow } from '../../projections/segments/queries.ts';
import type { Queryable } from '../db/db.ts';
import { compact } from './compact.ts';
import { brieflyTracked, episodesPerWeek, publishingStatus } from './format-rules.ts';
import type { SpeakerEntities } from './references.ts';
import { ancestryPathHash } from './topics.ts';

const round = (n: number, digits = 4) => Math.round(n * 10 ** digits) / 10 ** digits;
const minutes = (n: number | null) => (n === null ? null : round(n, 2));

export const toTopic = (t: TopicRow) =>
  compact({
    id: t.id,
    name: t.name,
    slug: t.slug,
    ancestry: t.ancestry,
    ancestry_path: t.ancestry_path ?? ancestryPathHash(t.ancestry),
    episode_count: t.episode_count,
  });

/** Episodes per week over the window, unknown while the show is briefly tracked (docs/catalog.md). */
export const weeklyRate = (
  f: Pick<CompactFormatRow, 'first_episode_published_at' | 'episodes_in_window'>,
  now: Date,
) =>
  brieflyTracked(new Date(f.first_episode_published_at), now)
    ? null
    : round(episodesPerWeek(f.episodes_in_window), 2);

/** Signals are shown only where guest frequency is known. */
const shownSignals = (f: CompactFormatRow) => (f.guest_frequency === null ? null : f.signals);

/** The full format profile (GET /v1/podcasts/{id}/format). */
export function toFormat(f: FormatRow, now: Date) {
  return compact({
    analyzed_episodes: f.analyzed_episodes,
    episode_count: f.episode_count,
    ad_episode_rate: round(f.ad_episode_rate),
    call_in_episode_rate: round(f.call_in_episode_rate),
    guest_episode_rate: round(f.guest_episode_rate),
    panel_episode_rate: round(f.panel_episode_rate),
    has_video: f.has_video,
    publish_days: f.publish_days,
    computed_at: f.computed_at,
    avg_episode_minutes: minutes(f.avg_episode_minutes),
    episode_minutes_median: minutes(f.episode_minutes_median),
    episode_minutes_p25: minutes(f.episode_minutes_p25),
    episode_minutes_p75: minutes(f.episode_minutes_p75),
    episodes_per_week: weeklyRate(f, now),
    first_episode_published_at: f.first_episode_published_at,
    latest_episode_published_at: f.latest_episode_published_at,
    guest_frequency: f.guest_frequency,
    has_ads: f.has_ads,
    publishing_status: publishingStatus(new Date(f.latest_episode_published_at), now),
    signals: shownSignals(f),
  });
}

/** The compact format on a Podcast: toFormat's values of these fields, with the show's own video. */
export function toCompactFormat(f: CompactFormatRow, podcastHasVideo: boolean | null, now: Date) {
  return compact({
    has_video: f.has_video || podcastHasVideo === true,
    avg_episode_minutes: minutes(f.avg_episode_minutes),
    episodes_per_week: weeklyRate(f, now),
    guest_frequency: f.guest_frequency,
    has_ads: f.has_ads,
    publishing_status: publishingStatus(new Date(f.latest_episode_published_at), now),
    signals: shownSignals(f),
  });
}

export function toPodcast(
  p: PodcastRow,
  extras: { format?: CompactFormatRow; topics?: TopicRow[]; matchQuality?: string; now: Date },
) {
  return compact({
    id: p.id,
    title: p.title,
    explicit: p.explicit ?? false,
    slug: p.slug,
    description: p.description,
    url: p.url,
    image_url: p.image_url,
    language: p.language,
    bias: p.bias,
    political_context: p.political_context,
    suitability_tier: p.suitability_tier,
    episode_count: p.episode_count,
    popularity: p.popularity,
    match_quality: extras.matchQuality,
    publisher: p.publisher ?? undefined,
    feed_url: p.feed_url,
    directory_ids: p.directory_ids && Object.keys(p.directory_ids).length ? p.directory_ids : undefined,
    topics: extras.topics?.map(toTopic),
    format: extras.format ? toCompactFormat(extras.format, p.has_video, extras.now) : undefined,
  });
}

/** A show's best rank (docs/catalog-rankings.md, "best_rank"); no category_slug for a chart without a category. */
const toBestRank = (b: BestRankRow) =>
  compact({
    captured_at: new Date(b.captured_at).toISOString(),
    chart_type: b.chart_type,
    rank: b.rank,
    source: b.source,
    category_slug: b.category_slug || undefined,
    country: b.country,
  });

export const toPodcastReference = (p: PodcastReferenceRow) =>
  compact({
    id: p.id,
    title: p.title,
    slug: p.slug,
    image_url: p.image_url,
    popularity: p.popularity,
    publisher: p.publisher ?? undefined,
    best_rank: p.best_rank ? toBestRank(p.best_rank) : undefined,
  });

export type PodcastReference = ReturnType<typeof toPodcastReference>;

/** The read model a podcast reference comes from beyond the catalog's (its best rank): the response
 * cache checks the answers of a route that renders references against it too. */
export const REFERENCE_CACHE = { readModels: [chartCapturesProjection] };
export type EpisodeReference = ReturnType<typeof toEpisodeReference>;

export async function podcastReferences(db: Queryable, ids: Iterable<string>) {
  const rows = await podcastsByIds(db, [...new Set(ids)]);
  return new Map(rows.map((row) => [row.id, toPodcastReference(row)]));
}

export const toEpisodeReference = (e: EpisodeRow, podcast: PodcastReference | undefined) =>
  compact({ id: e.id, title: e.title, slug: e.slug, published_at: e.published_at, podcast });

/** Episode references (with their podcasts) by episode id. */
export async function episodeReferences(db: Queryable, ids: Iterable<string>) {
  const episodes = await catalogEpisodesByIds(db, [...new Set(ids)]);
  const podcasts = await podcastReferences(
    db,
    episodes.map((e) => e.podcast_id),
  );
  return new Map(episodes.map((e) => [e.id, toEpisodeReference(e, podcasts.get(e.podcast_id))]));
}

export function toEpisode(e: EpisodeRow, podcast: PodcastReference | undefined) {
  return compact({
    id: e.id,
    title: e.title,
    duration_seconds: e.duration_seconds,
    explicit: e.explicit ?? false,
    has_transcript: e.has_transcript,
    slug: e.slug,
    description: e.description,
    audio_url: e.audio_url,
    image_url: e.image_url,
    language: e.language,
    url: e.url,
    episode_number: e.episode_number,
    entity_count: e.entity_count,
    clip_count: e.clip_count,
    segment_count: e.segment_count,
    published_at: e.published_at,
    podcast,
    videos: e.videos.length ? e.videos : undefined,
  });
}

type Entities = SpeakerEntities;
const entityRef = (entities: Entities, id: string | null | undefined) => (id ? entities.get(id) : undefined);

export const toEpisodeSpeaker = (s: EpisodeRow['speakers'][number], entities: Entities) =>
  compact({
    association_id: s.id,
    name: s.name,
    description: s.description,
    descriptor: s.descriptor,
    role: s.role,
    speaking_duration_seconds:
      s.speaking_duration_seconds === undefined ? undefined : Math.round(s.speaking_duration_seconds),
    entity: entityRef(entities, s.entity_id),
    person: entityRef(entities, s.person_id),
  });

/** A show's speaker (Speaker, podcast level): name, role, occurrences and the entity they are. */
export const toPodcastSpeaker = (s: PodcastSpeakerRow, entities: Entities) =>
  compact({
    name: s.name,
    role: s.role,
    occurrences: s.occurrences,
    entity: entityRef(entities, s.entity_id ?? s.person_id),
  });

export const toEpisodeTopic = (t: EpisodeRow['topics'][number]) => {
  const ancestry = t.ancestry ?? t.slug ?? t.id;
  return compact({
    id: t.id,
    name: t.name,
    slug: t.slug,
    ancestry,
    ancestry_path: ancestryPathHash(ancestry),
  });
};

/** Where a segment or clip sits, which its view takes from the episode given. */
type PlaceColumns = 'episode_id' | 'podcast_id' | 'published_at';

export const toSegment = (s: Omit<SegmentRow, PlaceColumns>, episode?: EpisodeReference) =>
  compact({
    id: s.id,
    title: s.title,
    type: s.type ?? 'TOPIC_DISCUSSION',
    number: s.number,
    start_seconds: s.start_seconds,
    end_seconds: s.end_seconds,
    duration_seconds: round(Math.max(0, s.end_seconds - s.start_seconds), 3),
    description: s.description,
    summary: s.summary,
    audio_url: s.audio_url,
    read_type: s.read_type,
    start_line: s.start_line,
    end_line: s.end_line,
    episode,
  });

export const toClip = (
  c: Omit<ClipRow, PlaceColumns>,
  extras: {
    episode?: EpisodeReference;
    segment?: Pick<SegmentRow, 'id' | 'title' | 'type'> | undefined;
    entities?: Entities;
  } = {},
) =>
  compact({
    id: c.id,
    title: c.title,
    start_seconds: c.start_seconds,
    end_seconds: c.end_seconds,
    duration_seconds: round(Math.max(0, c.end_seconds - c.start_seconds), 3),
    engagement_score: c.engagement_score,
    description: c.description,
    audio_url: c.audio_url,
    intro_statement: c.intro_statement,
    type: c.type,
    episode: extras.episode,
    segment: extras.segment
      ? compact({ id: extras.segment.id, title: extras.segment.title, type: extras.segment.type })
      : undefined,
    speaker: c.speaker
      ? compact({
          name: c.speaker.name,
          role: c.speaker.role,
          entity: entityRef(extras.entities ?? new Map(), c.speaker.entity_id),
          person: entityRef(extras.entities ?? new Map(), c.speaker.person_id),
        })
      : undefined,
  });

export const toAd = (a: AdRow) =>
  compact({
    id: a.id,
    sponsor: compact({ id: a.sponsor_id, name: a.sponsor_name, company_id: a.sponsor_company_id }),
    product: a.product,
    offer_description: a.offer_description,
    sponsor_url: a.sponsor_url,
    read_type: a.read_type,
    placement_type: a.placement_type,
    start_seconds: a.start_seconds,
    end_seconds: a.end_seconds,
    is_network_promo: a.is_network_promo,
  });
