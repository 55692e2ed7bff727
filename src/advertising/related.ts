import type { LinkKind } from '../../projections/podcast-links/projection.ts';
import {
  episodesSharing,
  type FirstPassParts,
  firstPassCandidates,
  keysOfPodcast,
  type LinkRow,
  linksOfEpisodes,
  linksOfPodcasts,
  PROFILE_CAPS,
  publishersOf,
} from '../../projections/podcast-links/queries.ts';
import { type PodcastByIdRow, podcastsByIds } from '../../projections/podcasts/queries.ts';
import type { Queryable } from '../db/db.ts';

/** Weights of the related-show score (docs/advertising.md, "Scores"); they sum to 1. */
const PODCAST_WEIGHTS = {
  guests: 0.3,
  sponsors: 0.2,
  topic_overlap: 0.2,
  content_similarity: 0.2,
  same_publisher: 0.1,
} as const;
/** Shared guests and sponsors saturate at these counts. */
const GUESTS_FOR_FULL = 3;
const SPONSORS_FOR_FULL = 5;

const EPISODE_WEIGHTS = {
  guests: 0.35,
  sponsors: 0.15,
  topic_overlap: 0.3,
  same_podcast: 0.1,
  same_publisher: 0.1,
} as const;
const EPISODE_GUESTS_FOR_FULL = 2;
const EPISODE_SPONSORS_FOR_FULL = 3;

/** Candidates per shared key, and shows fully scored, bounding the work per request. */
const PER_KEY = 100;
const SCORED = 50;
const SHOWN_PARTS = 5;

/** The first pass, on what the candidate rows already show (counts only), picks the shows worth scoring fully. */
const FIRST_PASS: FirstPassParts = {
  guest: PODCAST_WEIGHTS.guests / GUESTS_FOR_FULL,
  sponsor: PODCAST_WEIGHTS.sponsors / SPONSORS_FOR_FULL,
  topics: PODCAST_WEIGHTS.topic_overlap + PODCAST_WEIGHTS.content_similarity,
  mate: PODCAST_WEIGHTS.same_publisher,
};

const round = (n: number) => Math.round(n * 10_000) / 10_000;

interface Profile {
  guests: Set<string>;
  sponsors: Set<string>;
  topics: Map<string, number>;
  categories: Set<string>;
  labels: Map<string, string | null>;
}

const emptyProfile = (): Profile => ({
  guests: new Set(),
  sponsors: new Set(),
  topics: new Map(),
  categories: new Set(),
  labels: new Map(),
});

function profiles(rows: readonly LinkRow[]) {
  const byShow = new Map<string, Profile>();
  for (const row of rows) {
    const p = byShow.get(row.podcast_id) ?? emptyProfile();
    byShow.set(row.podcast_id, p);
    if (row.kind === 'guest') p.guests.add(row.key);
    else if (row.kind === 'sponsor') p.sponsors.add(row.key);
    else if (row.kind === 'topic') p.topics.set(row.key, row.episode_count);
    else p.categories.add(row.key);
    p.labels.set(`${row.kind}:${row.key}`, row.label);
  }
  return byShow;
}

const intersect = <T>(a: Iterable<T>, b: { has(v: T): boolean }) => [...a].filter((v) => b.has(v)).sort();

function jaccard(
  a: ReadonlyMap<string, number> | ReadonlySet<string>,
  b: ReadonlyMap<string, number> | ReadonlySet<string>,
) {
  const shared = [...a.keys()].filter((k) => b.has(k)).length;
  const union = a.size + b.size - shared;
  return union === 0 ? 0 : shared / union;
}

function cosine(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>) {
  let dot = 0;
  for (const [k, v] of a) dot += v * (b.get(k) ?? 0);
  const norm = (m: ReadonlyMap<string, number>) => Math.sqrt([...m.values()].reduce((s, v) => s + v * v, 0));
  const d = norm(a) * norm(b);
  return d === 0 ? 0 : dot / d;
}

export interface ScoredShow {
  podcast_id: string;
  score: number;
  popularity: number;
  basis: {
    same_publisher: boolean;
    shared_category_count: number;
    shared_guest_count: number;
    shared_sponsor_count: number;
    content_similarity: number;
    topic_overlap: number;
    shared_guest_ids: string[];
    shared_topics: { id: string; label: string | null }[];
    components: Record<keyof typeof PODCAST_WEIGHTS, number>;
  };
}

/** The related-show score of `other` for `me`, every part kept (docs/advertising.md, "Scores"). */
function scoreShow(me: Profile, other: Profile, samePublisher: boolean) {
  const guests = intersect(me.guests, other.guests);
  const sponsors = intersect(me.sponsors, other.sponsors);
  const topics = intersect(me.topics.keys(), other.topics);
  const topicOverlap = jaccard(me.topics, other.topics);
  const contentSimilarity = cosine(me.topics, other.topics);
  const components = {
    guests: round(PODCAST_WEIGHTS.guests * Math.min(1, guests.length / GUESTS_FOR_FULL)),
    sponsors: round(PODCAST_WEIGHTS.sponsors * Math.min(1, sponsors.length / SPONSORS_FOR_FULL)),
    topic_overlap: round(PODCAST_WEIGHTS.topic_overlap * topicOverlap),
    content_similarity: round(PODCAST_WEIGHTS.content_similarity * contentSimilarity),
    same_publisher: samePublisher ? PODCAST_WEIGHTS.same_publisher : 0,
  };
  return {
    score: round(Object.values(components).reduce((s, v) => s + v, 0)),
    basis: {
      same_publisher: samePublisher,
      shared_category_count: intersect(me.categories, other.categories).length,
      shared_guest_count: guests.length,
      shared_sponsor_count: sponsors.length,
      content_similarity: round(contentSimilarity),
      topic_overlap: round(topicOverlap),
      shared_guest_ids: guests,
      shared_topics: topics.map((id) => ({ id, label: me.labels.get(`topic:${id}`) ?? null })),
      components,
    },
  };
}

const byScore = (a: ScoredShow, b: ScoredShow) =>
  b.score - a.score ||
  b.popularity - a.popularity ||
  (a.podcast_id < b.podcast_id ? -1 : a.podcast_id > b.podcast_id ? 1 : 0);

export interface RelatedShows {
  /** Best first. */
  shows: ScoredShow[];
  /** The show's guests and sponsors among its profile's and the scored shows' (past its profile too). */
  held: Record<'guest' | 'sponsor', ReadonlySet<string>>;
  /** The links of every show scored, labelled for guests and sponsors only. */
  theirs: LinkRow[];
  /** The show and every show scored, by id. */
  podcasts: ReadonlyMap<string, PodcastByIdRow>;
}

/**
 * Shows related to one show, best first, each sharing at least one guest, sponsor, topic or its
 * publisher. Deterministic: ties go to the more popular show, then the smaller id. Also gives what
 * it read on the way, so recommendations drawn from the related shows need not read it again.
 */
export async function relatedShows(db: Queryable, podcastId: string): Promise<RelatedShows> {
  // The first pass reads the show's own links itself, so both go in parallel.
  const [own, rough] = await Promise.all([
    linksOfPodcasts(db, [podcastId]),
    firstPassCandidates(db, podcastId, FIRST_PASS, PER_KEY, SCORED),
  ]);
  const mine = profiles(own).get(podcastId) ?? emptyProfile();
  const [theirs, rows] = await Promise.all([
    linksOfPodcasts(db, rough, undefined, ['guest', 'sponsor']),
    podcastsByIds(db, [podcastId, ...rough]),
  ]);
  const podcasts = new Map(rows.map((r) => [r.id, r]));
  const publisherOf = (id: string) => podcasts.get(id)?.publisher?.id ?? null;
  const fullProfiles = profiles(theirs);
  const myPublisher = publisherOf(podcastId);
  const shows = rough
    .map((id) => {
      const other = fullProfiles.get(id) ?? emptyProfile();
      const samePublisher = myPublisher !== null && publisherOf(id) === myPublisher;
      return {
        podcast_id: id,
        popularity: podcasts.get(id)?.popularity ?? 0,
        ...scoreShow(mine, other, samePublisher),
      };
    })
    .filter((s) => s.score > 0)
    .sort(byScore);
  const [guests, sponsors] = await Promise.all([
    heldPastProfile(db, podcastId, 'guest', mine.guests, theirs),
    heldPastProfile(db, podcastId, 'sponsor', mine.sponsors, theirs),
  ]);
  return { shows, held: { guest: guests, sponsor: sponsors }, theirs, podcasts };
}

/**
 * The keys of a kind the show holds among its profile's and the scored shows': a profile at its
 * cap may leave out keys the show holds, which are looked up (those of the scored shows only).
 */
async function heldPastProfile(
  db: Queryable,
  podcastId: string,
  kind: 'guest' | 'sponsor',
  profile: ReadonlySet<string>,
  theirs: readonly LinkRow[],
): Promise<ReadonlySet<string>> {
  if (profile.size < PROFILE_CAPS[kind]) return profile;
  const others = new Set(theirs.filter((l) => l.kind === kind && !profile.has(l.key)).map((l) => l.key));
  return new Set([...profile, ...(await keysOfPodcast(db, podcastId, kind, [...others]))]);
}

export interface ScoredEpisode {
  episode_id: string;
  podcast_id: string;
  score: number;
  basis: {
    same_podcast: boolean;
    same_publisher: boolean;
    shared_guest_count: number;
    shared_sponsor_count: number;
    topic_overlap: number;
    shared_guest_ids: string[];
    shared_topics: { id: string; label: string | null }[];
    components: Record<keyof typeof EPISODE_WEIGHTS, number>;
  };
}

/** Episodes related to one episode, best first (docs/advertising.md, "Scores"). */
export async function relatedEpisodes(db: Queryable, episodeId: string): Promise<ScoredEpisode[]> {
  const own = await linksOfEpisodes(db, [episodeId], ['guest', 'sponsor', 'topic']);
  const keys = own.map((l) => ({ kind: l.kind, key: l.key }));
  const candidates = await episodesSharing(db, episodeId, keys, 100);
  // Their labels are never shown: only the episode's own name its shared topics.
  const theirs = await linksOfEpisodes(db, candidates, ['guest', 'sponsor', 'topic'], false);
  const myPodcast = own[0]?.podcast_id;
  const set = (rows: typeof own, kind: LinkKind) =>
    new Set(rows.filter((r) => r.kind === kind).map((r) => r.key));
  const mine = { guests: set(own, 'guest'), sponsors: set(own, 'sponsor'), topics: set(own, 'topic') };
  const labels = new Map(own.map((l) => [l.key, l.label]));
  const linked = new Map<string, { podcastId: string } & Record<LinkKind, Set<string>>>();
  for (const l of theirs) {
    const of = linked.get(l.episode_id) ?? {
      podcastId: l.podcast_id,
      guest: new Set<string>(),
      sponsor: new Set<string>(),
      topic: new Set<string>(),
      category: new Set<string>(),
    };
    of[l.kind].add(l.key);
    linked.set(l.episode_id, of);
  }
  const publishers = await publishersOf(db, [
    ...new Set([...(myPodcast ? [myPodcast] : []), ...[...linked.values()].map((l) => l.podcastId)]),
  ]);
  const myPublisher = myPodcast ? (publishers.get(myPodcast)?.publisher_id ?? null) : null;
  return candidates
    .map((id) => {
      const of = linked.get(id);
      const podcastId = of?.podcastId ?? '';
      const guests = intersect(of?.guest ?? [], mine.guests);
      const sponsors = intersect(of?.sponsor ?? [], mine.sponsors);
      const topics = of?.topic ?? new Set<string>();
      const overlap = jaccard(mine.topics, topics);
      const samePodcast = podcastId === myPodcast;
      const samePublisher = myPublisher !== null && publishers.get(podcastId)?.publisher_id === myPublisher;
      const components = {
        guests: round(EPISODE_WEIGHTS.guests * Math.min(1, guests.length / EPISODE_GUESTS_FOR_FULL)),
        sponsors: round(EPISODE_WEIGHTS.sponsors * Math.min(1, sponsors.length / EPISODE_SPONSORS_FOR_FULL)),
        topic_overlap: round(EPISODE_WEIGHTS.topic_overlap * overlap),
        same_podcast: samePodcast ? EPISODE_WEIGHTS.same_podcast : 0,
        same_publisher: samePublisher ? EPISODE_WEIGHTS.same_publisher : 0,
      };
      return {
        episode_id: id,
        podcast_id: podcastId,
        score: round(Object.values(components).reduce((s, v) => s + v, 0)),
        basis: {
          same_podcast: samePodcast,
          same_publisher: samePublisher,
          shared_guest_count: guests.length,
          shared_sponsor_count: sponsors.length,
          topic_overlap: round(overlap),
          shared_guest_ids: guests,
          shared_topics: intersect(mine.topics, topics).map((t) => ({ id: t, label: labels.get(t) ?? null })),
          components,
        },
      };
    })
    .filter((e) => e.score > 0)
    .sort(
      (a, b) => b.score - a.score || (a.episode_id < b.episode_id ? -1 : a.episode_id > b.episode_id ? 1 : 0),
    );
}

/** People by id for a basis or a recommendation: the entity when known, else the id alone. */
export async function peopleOf(db: Queryable, ids: Iterable<string>) {
  const wanted = [...new Set(ids)];
  const { rows } = wanted.length
    ? await db.query<{
        id: string;
        name: string;
        slug: string;
        description: string | null;
        image_url: string | null;
      }>('select id, name, slug, description, image_url from entities where id = any($1::text[])', [wanted])
    : { rows: [] };
  const entities = new Map(rows.map((r) => [r.id, r]));
  return (id: string, fallbackName?: string | null) => {
    const e = entities.get(id);
    return {
      id,
      name: e?.name ?? fallbackName ?? id,
      ...(e ? { slug: e.slug } : {}),
      ...(e?.description ? { description: e.description } : {}),
      ...(e?.image_url ? { image_url: e.image_url } : {}),
    };
  };
}

export const topicOf = (t: { id: string; label: string | null }) => {
  const parsed = t.label ? (JSON.parse(t.label) as { name?: string; slug?: string; ancestry?: string }) : {};
  return {
    id: t.id,
    name: parsed.name ?? t.id,
    ...(parsed.slug ? { slug: parsed.slug } : {}),
    ...(parsed.ancestry ? { ancestry: parsed.ancestry } : {}),
  };
};

export const SHOWN = SHOWN_PARTS;
