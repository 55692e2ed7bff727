import { catalogEpisodesProjection } from '../../projections/catalog-episodes/projection.ts';
import { podcastFormatsProjection } from '../../projections/podcast-formats/projection.ts';
import { podcastsProjection } from '../../projections/podcasts/projection.ts';
import {
  type PodcastFilters,
  type PodcastItemStamp,
  type SeenTitleHits,
  TOPIC_SHARE,
  topicAncestry,
} from '../../projections/podcasts/queries.ts';
import type { Db, Queryable } from '../db/db.ts';
import { codePointCompare } from './code-points.ts';
import { ACTIVE_WINDOW_DAYS, BRIEFLY_TRACKED_DAYS } from './format-rules.ts';
import { readModelVersionsSql } from './response-cache.ts';
import { SharedReads } from './shared-reads.ts';
import { type TitleQuery, TitleTrigrams } from './title-trigrams.ts';

/**
 * The read models the list read model and a topic_id's resolution come from: while they stand
 * where the index last read them, so does everything a filtered page reads.
 */
const SOURCES = [podcastsProjection.name, podcastFormatsProjection.name, catalogEpisodesProjection.name];
/** How long a request waits for the index to read what changed before the SQL path serves it. */
const DELTA_WAIT_MS = 50;
/** After a failed read, the SQL path serves for this long. */
const ERROR_RETRY_MS = 1_000;
/** Shows read a statement while loading the whole index. */
const LOAD_BATCH = 5_000;
/** topic_id resolutions kept at one position at most (each asked value, unknown ones too). */
const TOPICS_KEPT = 1_000;
/** After a load over the budget, the index is not loaded again for this long: the SQL path serves. */
const OVER_BUDGET_RETRY_MS = 10 * 60_000;
/**
 * Bytes counted for a show beyond its strings, for each of its episodes and for each of its rows of
 * an ancestry: on the benchmark's catalog the heap grew by about what they count.
 */
const SHOW_BYTES = 700;
const EPISODE_BYTES = 12;
const ANCESTRY_ROW_BYTES = 48;
/** Bytes counted for each character of a show's title: its text, words and trigram lists (34: about what 100,000 titles took of the heap). */
const TITLE_CHAR_BYTES = 34;

/**
 * SQL: an instant as a number comparable with whole epoch milliseconds exactly as PostgreSQL compares
 * the instants: its milliseconds, plus 0.5 when it has microseconds beyond them (a Date has none).
 */
const instantKey = (column: string) =>
  `(floor(extract(epoch from ${column}) * 1000)
    + case when extract(epoch from ${column}) * 1000 <> floor(extract(epoch from ${column}) * 1000)
           then 0.5 else 0 end)::float8`;

/** SQL: a request's instant less `days` days, as the SQL path computes it (in the session's time zone), in epoch ms. */
const daysBefore = (now: string, days: number) =>
  `floor(extract(epoch from ${now} - interval '${days} days') * 1000)::float8`;

interface ListRow {
  podcast_id: string;
  slug: string | null;
  language: string | null;
  suitability_tier: string | null;
  popularity: number | null;
  has_video: boolean;
  guest_frequency: string | null;
  signals: string[] | null;
  has_ads: boolean | null;
  avg_episode_minutes: number | null;
  first: number | null;
  latest: number | null;
  version: string;
  search_title: string | null;
}

/** A show as the index holds it; the lists of its ancestries hold its shares. */
interface Show {
  id: string;
  /** Its item's version (its list row's xmin), as listPodcastStamps reads it. */
  version: string;
  /** Its title in search-key form, as `podcasts.search_title` holds it. */
  title: string | null;
  slug: string | null;
  language: string | null;
  tier: string | null;
  /** NaN when none. */
  popularity: number;
  hasVideo: boolean;
  guest: string | null;
  signals: string[] | null;
  hasAds: boolean | null;
  /** NaN when none. */
  avgMinutes: number;
  /** instantKey of its first and latest episodes; NaN without a format profile. */
  first: number;
  latest: number;
  /** instantKey of each of its episodes' publication, ascending. */
  episodes: number[];
  /** Its rows besides '': their ancestries, and the show's share of each. */
  ancestries: string[];
  shares: number[];
  bytes: number;
}

/** An ancestry's shows in the relevance order of a topic_id page: share, popularity, id. */
interface Ancestry {
  shows: Show[];
  shares: number[];
  /** Its shows at or above a topic_id's share, in popularity order (sort=popularity), computed when first asked. */
  byPopularity?: Show[];
}

const byPopularity = (a: Show, b: Show) => {
  const na = Number.isNaN(a.popularity);
  const nb = Number.isNaN(b.popularity);
  if (na !== nb) return na ? 1 : -1;
  if (!na && a.popularity !== b.popularity) return a.popularity > b.popularity ? -1 : 1;
  return codePointCompare(a.id, b.id);
};

/** Shows in a page's order, merged: `kept` in order already, `added` sorted here. */
function merged<T>(kept: T[], added: T[], compare: (a: T, b: T) => number): T[] {
  if (added.length === 0) return kept;
  added.sort(compare);
  const out: T[] = new Array(kept.length + added.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < kept.length && j < added.length)
    out[k++] = compare(kept[i] as T, added[j] as T) <= 0 ? (kept[i++] as T) : (added[j++] as T);
  while (i < kept.length) out[k++] = kept[i++] as T;
  while (j < added.length) out[k++] = added[j++] as T;
  return out;
}

/** Keys in `keys` (ascending) at most `x`. */
function countAtMost(keys: readonly number[], x: number) {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((keys[mid] as number) <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The list read model as one snapshot saw it, at `version` of its sources. */
interface State {
  version: string;
  /** The snapshot it was read in (pg_snapshot as text): what it did not see is read again. */
  snapshot: string;
  /** performance.now() when the snapshot's reads began. */
  startedAt: number;
  shows: Map<string, Show>;
  /** Every show, by popularity (a page without topic_id). */
  all: Show[];
  ancestries: Map<string, Ancestry>;
  /** topic_id → the ancestry it names, resolved at `version`. */
  topics: Map<string, string>;
  /** Every show's title, for a search's candidates. */
  titles: TitleTrigrams;
  bytes: number;
}

/** What a page needs of the database besides the index: where the sources stand, and its instants. */
interface Head {
  version: string;
  /** Epoch ms of now less the trailing window, and less the briefly tracked days (session time zone). */
  windowStart: number;
  trackedBefore: number;
  ancestry?: string;
}

/**
 * The filter columns of GET /v1/podcasts for every show, kept per api process
 * (docs/catalog.md, "The list index"): a page without `q` is filtered, sorted and cut in memory,
 * from a snapshot of the list read model at the position its sources stand at when the request
 * reads them (one small statement a request); when they moved, the shows written since are read
 * again. Over `maxBytes`, on a database that does not sort text by code point, or while the first
 * load runs, `stamps` answers undefined and the SQL path serves.
 */
export class PodcastListIndex {
  readonly maxBytes: number;
  readonly #checks = new SharedReads<{ version: string; zone: string }>();
  #state: State | undefined;
  #refresh: { startedAt: number; full: boolean; done: Promise<State | undefined> } | undefined;
  #unusableUntil = 0;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** Bytes counted against the budget now (0 when nothing is loaded). */
  get bytes() {
    return this.#state?.bytes ?? 0;
  }

  /** Starts loading the index (when the process starts), so the first pages need not wait for it. */
  warm(db: Db): void {
    if (this.maxBytes > 0) void this.#current(db, '', Number.POSITIVE_INFINITY);
  }

  /**
   * The stamps of a page (listPodcastStamps' answer) for filters without `q`, from the index;
   * undefined when the index cannot answer now.
   */
  async stamps(
    db: Db,
    f: PodcastFilters,
    limit: number,
    offset: number,
  ): Promise<PodcastItemStamp[] | undefined> {
    if (this.maxBytes <= 0 || f.q || performance.now() < this.#unusableUntil) return undefined;
    const topicId = f.topicId;
    const resolve = topicId !== undefined && !this.#state?.topics.has(topicId) ? topicId : undefined;
    let head: Head;
    const check = resolve === undefined ? await this.#checks.after('', () => readCheck(db)) : undefined;
    if (check && UTC_ZONES.has(check.zone)) {
      // with days of 24 hours, the window's instants are the SQL path's without asking it
      const now = f.now.getTime();
      head = {
        version: check.version,
        windowStart: now - ACTIVE_WINDOW_DAYS * DAY_MS,
        trackedBefore: now - BRIEFLY_TRACKED_DAYS * DAY_MS,
      };
    } else head = await readHead(db, f.now, resolve);
    const state = await this.#current(db, head.version, performance.now());
    if (!state) return undefined;
    let ancestry: string | undefined;
    if (topicId !== undefined) {
      ancestry = state.topics.get(topicId);
      if (ancestry === undefined) {
        // resolved where the index stands (the index moved since the head was read, or it was not asked)
        if (head.ancestry === undefined || head.version !== state.version)
          head = await readHead(db, f.now, topicId);
        // the sources moved again: the SQL path resolves it with its page
        if (head.ancestry === undefined || head.version !== state.version) return undefined;
        ancestry = head.ancestry;
        if (state.topics.size >= TOPICS_KEPT) state.topics.clear();
        state.topics.set(topicId, ancestry);
      }
    }
    return pageOf(state, f, ancestry, head, limit, offset);
  }

  /**
   * A search's title matches, from the index at the position the list's sources stand at or later
   * (docs/catalog.md, "Title matches in memory"); undefined when it cannot tell.
   */
  async titleHits(db: Db, query: TitleQuery): Promise<SeenTitleHits | undefined> {
    if (this.maxBytes <= 0 || performance.now() < this.#unusableUntil) return undefined;
    const check = await this.#checks.after('', () => readCheck(db));
    const state = await this.#current(db, check.version, performance.now());
    const hits = state?.titles.hits(query);
    if (!state || !hits) return undefined;
    const popularities: (number | null)[] = [];
    for (const id of hits.ids) {
      const show = state.shows.get(id);
      if (!show) return undefined;
      popularities.push(Number.isNaN(show.popularity) ? null : show.popularity);
    }
    return { ...hits, seen: state.snapshot, popularities };
  }

  /** The state at `version` or later (a snapshot begun after `readAt`); undefined when none is ready. */
  async #current(db: Db, version: string, readAt: number): Promise<State | undefined> {
    for (;;) {
      const state = this.#state;
      if (state && (state.version === version || state.startedAt >= readAt)) return state;
      const refresh = this.#refresh;
      if (refresh) {
        // a first load is not waited for: it reads every show
        if (refresh.full) return undefined;
        // a long one (a rebuild's first batch, say) is not waited for either
        const done = await within(refresh.done, DELTA_WAIT_MS);
        if (done === TIMED_OUT) return undefined;
        if (refresh.startedAt >= readAt) return done;
        if (!done) return undefined;
        continue;
      }
      if (performance.now() < this.#unusableUntil) return undefined;
      const startedAt = performance.now();
      const done = (state ? this.#delta(db, state, startedAt) : this.#load(db, startedAt))
        .catch(() => {
          // read again from scratch a moment later; meanwhile the SQL path serves
          this.#state = undefined;
          this.#unusableUntil = performance.now() + ERROR_RETRY_MS;
          return undefined;
        })
        .finally(() => {
          if (this.#refresh?.done === done) this.#refresh = undefined;
        });
      this.#refresh = { startedAt, full: !state, done };
      if (!state) return undefined;
    }
  }

  async #load(db: Db, startedAt: number): Promise<State | undefined> {
    return db.transaction(async (tx) => {
      await tx.query('set transaction isolation level repeatable read, read only');
      const { rows } = await tx.query<{ v: string; snapshot: string; code_points: boolean }>(
        `select ${readModelVersionsSql('$1::text[]')} as v, pg_current_snapshot()::text as snapshot,
                coalesce((select datlocprovider = 'b' or (datlocprovider = 'c' and datcollate in ('C', 'POSIX', 'C.UTF-8', 'C.utf8'))
                            from pg_database where datname = current_database()), false)
                and (select attcollation in (0, 100) from pg_attribute
                      where attrelid = 'podcast_list'::regclass and attname = 'podcast_id') as code_points`,
        [SOURCES],
      );
      const head = rows[0] as { v: string; snapshot: string; code_points: boolean };
      if (!head.code_points) return this.#unusable(undefined);
      const state: State = {
        version: head.v,
        snapshot: head.snapshot,
        startedAt,
        shows: new Map(),
        all: [],
        ancestries: new Map(),
        topics: new Map(),
        titles: new TitleTrigrams(),
        bytes: 0,
      };
      let after = '';
      let bytes = 0;
      const read: Show[] = [];
      for (;;) {
        const { rows: ids } = await tx.query<{ id: string }>(
          `select podcast_id as id from podcast_list where ancestry = '' and podcast_id > $1::text
            order by podcast_id limit ${LOAD_BATCH}`,
          [after],
        );
        if (ids.length === 0) break;
        for (const { id } of ids) {
          // the database's order must be the index's
          if (codePointCompare(after, id) >= 0) return this.#unusable(undefined);
          after = id;
        }
        const shows = await readShows(
          tx,
          'l.podcast_id = any($1::text[])',
          ids.map((r) => r.id),
        );
        for (const show of shows.values()) {
          if (!show) continue;
          read.push(show);
          bytes += show.bytes;
        }
        if (bytes > this.maxBytes) return this.#unusable(OVER_BUDGET_RETRY_MS);
      }
      apply(state, new Map(read.map((show) => [show.id, show])));
      // the ancestries count too
      if (state.bytes > this.maxBytes) return this.#unusable(OVER_BUDGET_RETRY_MS);
      this.#state = state;
      return state;
    });
  }

  async #delta(db: Db, state: State, startedAt: number): Promise<State | undefined> {
    return db.transaction(async (tx) => {
      await tx.query('set transaction isolation level repeatable read, read only');
      const { rows } = await tx.query<{ v: string; snapshot: string; removed: string[] }>(
        `select ${readModelVersionsSql('$1::text[]')} as v, pg_current_snapshot()::text as snapshot,
                array(select podcast_id from podcast_list_removed where ${unseen('changed', '$2')}) as removed`,
        [SOURCES, state.snapshot],
      );
      const head = rows[0] as { v: string; snapshot: string; removed: string[] };
      const changes = await readShows(tx, unseen('l.changed', '$1'), state.snapshot);
      for (const id of head.removed) if (!changes.has(id)) changes.set(id, null);
      apply(state, changes);
      state.version = head.v;
      state.snapshot = head.snapshot;
      state.startedAt = startedAt;
      state.topics.clear();
      if (state.bytes > this.maxBytes) return this.#unusable(OVER_BUDGET_RETRY_MS);
      return state;
    });
  }

  /** The index cannot serve: the SQL path does, for `retryMs` (for good when undefined). */
  #unusable(retryMs: number | undefined): undefined {
    this.#state = undefined;
    this.#unusableUntil = retryMs === undefined ? Number.POSITIVE_INFINITY : performance.now() + retryMs;
    return undefined;
  }
}

const DAY_MS = 86_400_000;
/** Session time zones whose days all have 24 hours, as `now - interval 'N days'` counts them. */
const UTC_ZONES = new Set(
  ['UTC', 'UCT', 'GMT', 'GMT0', 'GMT+0', 'GMT-0', 'Zulu', 'Universal', 'Greenwich'].flatMap((zone) => [
    zone,
    `Etc/${zone}`,
  ]),
);

/**
 * Where the list's sources stand, and the session's time zone: read once for every request that
 * arrives while a read is under way (SharedReads).
 */
async function readCheck(db: Queryable) {
  const { rows } = await db.query<{ version: string; zone: string }>(
    `select ${readModelVersionsSql('$1::text[]')} as version, current_setting('TimeZone') as zone`,
    [SOURCES],
  );
  return rows[0] as { version: string; zone: string };
}

const TIMED_OUT = Symbol('timed out');

/** What `promise` gives if it settles within `ms`, else TIMED_OUT. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(resolve, ms, TIMED_OUT);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function readHead(db: Queryable, now: Date, topicId: string | undefined): Promise<Head> {
  const { rows } = await db.query<{
    v: string;
    window_start: number;
    tracked_before: number;
    ancestry?: string;
  }>(
    `select ${readModelVersionsSql('$1::text[]')} as v,
            ${daysBefore('$2::timestamptz', ACTIVE_WINDOW_DAYS)} as window_start,
            ${daysBefore('$2::timestamptz', BRIEFLY_TRACKED_DAYS)} as tracked_before
            ${topicId === undefined ? '' : `, ${topicAncestry('$3::text')} as ancestry`}`,
    topicId === undefined ? [SOURCES, now] : [SOURCES, now, topicId],
  );
  const row = rows[0] as { v: string; window_start: number; tracked_before: number; ancestry?: string };
  return {
    version: row.v,
    windowStart: row.window_start,
    trackedBefore: row.tracked_before,
    ...(row.ancestry === undefined ? {} : { ancestry: row.ancestry }),
  };
}

/**
 * SQL: the rows whose transaction `column` the snapshot `param` did not see. The range on its xmin
 * uses the column's index; the visibility test keeps a transaction left open elsewhere on the
 * server (which holds every later snapshot's xmin back) from making each read take again every
 * show written since it began.
 */
const unseen = (column: string, param: string) =>
  `${column} >= pg_snapshot_xmin(${param}::pg_snapshot) and not pg_visible_in_snapshot(${column}, ${param}::pg_snapshot)`;

/** The shows whose list rows `where` selects (over `podcast_list l`), with their episodes. */
async function readShows(tx: Queryable, where: string, param: unknown): Promise<Map<string, Show | null>> {
  const { rows } = await tx.query<ListRow>(
    `select l.podcast_id, l.slug, l.language, l.suitability_tier, l.popularity, l.has_video,
            l.guest_frequency, l.signals, l.has_ads, l.avg_episode_minutes,
            ${instantKey('l.first_episode_published_at')} as first,
            ${instantKey('l.latest_episode_published_at')} as latest, l.xmin::text as version,
            p.search_title
       from podcast_list l left join podcasts p on p.id = l.podcast_id
      where ${where} and l.ancestry = ''`,
    [param],
  );
  const shows = new Map<string, Show | null>();
  const interned = new Map<string, string>();
  const intern = (s: string | null) => {
    if (s === null) return null;
    const known = interned.get(s);
    if (known !== undefined) return known;
    interned.set(s, s);
    return s;
  };
  for (const row of rows)
    shows.set(row.podcast_id, {
      id: row.podcast_id,
      version: row.version,
      title: row.search_title,
      slug: row.slug,
      language: intern(row.language),
      tier: intern(row.suitability_tier),
      popularity: row.popularity ?? Number.NaN,
      hasVideo: row.has_video,
      guest: intern(row.guest_frequency),
      signals: row.signals,
      hasAds: row.has_ads,
      avgMinutes: row.avg_episode_minutes ?? Number.NaN,
      first: row.first ?? Number.NaN,
      latest: row.latest ?? Number.NaN,
      episodes: [],
      ancestries: [],
      shares: [],
      bytes: 0,
    });
  const { rows: shares } = await tx.query<{ podcast_id: string; ancestry: string; share: number }>(
    `select l.podcast_id, l.ancestry, l.share from podcast_list l where ${where} and l.ancestry <> ''`,
    [param],
  );
  for (const row of shares) {
    const show = shows.get(row.podcast_id);
    if (!show) continue;
    show.ancestries.push(intern(row.ancestry) as string);
    show.shares.push(row.share);
  }
  const ids = [...shows.keys()];
  const { rows: episodes } = await tx.query<{ podcast_id: string; keys: number[] }>(
    `select podcast_id, array_agg(${instantKey('published_at')} order by published_at) as keys
       from podcast_format_episodes where podcast_id = any($1::text[]) group by podcast_id`,
    [ids],
  );
  for (const row of episodes) {
    const show = shows.get(row.podcast_id);
    if (show) show.episodes = row.keys;
  }
  for (const show of shows.values()) {
    if (!show) continue;
    show.bytes =
      SHOW_BYTES +
      2 * (show.id.length + (show.slug?.length ?? 0) + show.version.length) +
      EPISODE_BYTES * show.episodes.length +
      show.ancestries.length * ANCESTRY_ROW_BYTES +
      TITLE_CHAR_BYTES * (show.title?.length ?? 0);
  }
  return shows;
}

/** Replaces the shows of `changes` (null: gone) in the state, keeping its orders. */
function apply(state: State, changes: Map<string, Show | null>) {
  if (changes.size === 0) return;
  const touched = new Set<string>();
  for (const [id, show] of changes) {
    state.titles.set(id, show?.title ?? null);
    const old = state.shows.get(id);
    if (old) {
      for (const a of old.ancestries) touched.add(a);
      state.bytes -= old.bytes;
      state.shows.delete(id);
    }
    if (show) {
      for (const a of show.ancestries) touched.add(a);
      state.bytes += show.bytes;
      state.shows.set(id, show);
    }
  }
  const changed = (show: Show) => changes.has(show.id);
  const added = [...changes.values()].filter((show): show is Show => show !== null);
  state.all = merged(
    state.all.filter((show) => !changed(show)),
    added,
    byPopularity,
  );
  const fresh = new Map<string, [Show, number][]>();
  for (const show of added)
    for (const [i, name] of show.ancestries.entries()) {
      const list = fresh.get(name) ?? [];
      list.push([show, show.shares[i] as number]);
      fresh.set(name, list);
    }
  for (const name of touched) {
    const old = state.ancestries.get(name);
    const kept: [Show, number][] = [];
    if (old)
      for (const [i, show] of old.shows.entries())
        if (!changed(show)) kept.push([show, old.shares[i] as number]);
    const entries = merged(kept, fresh.get(name) ?? [], byShare);
    if (entries.length === 0) {
      if (old) state.bytes -= ancestryBytes(name);
      state.ancestries.delete(name);
      continue;
    }
    if (!old) state.bytes += ancestryBytes(name);
    state.ancestries.set(name, {
      shows: entries.map(([show]) => show),
      shares: entries.map(([, share]) => share),
    });
  }
}

const ancestryBytes = (name: string) => 200 + 2 * name.length;

/** share desc, popularity desc nulls last, id: the order of a topic_id page by relevance. */
const byShare = ([a, sa]: [Show, number], [b, sb]: [Show, number]) =>
  sa !== sb ? (sa > sb ? -1 : 1) : byPopularity(a, b);

/** A page's stamps from the state: the SQL path's filters, order, offset and limit (pageStatement). */
function pageOf(
  state: State,
  f: PodcastFilters,
  ancestry: string | undefined,
  head: Head,
  limit: number,
  offset: number,
): PodcastItemStamp[] {
  const now = f.now.getTime();
  const { windowStart, trackedBefore } = head;
  const inWindow = (show: Show) => countAtMost(show.episodes, now) - countAtMost(show.episodes, windowStart);
  const language = f.language?.toLowerCase();
  const minPopularity = f.minPopularity !== undefined && f.minPopularity > 0 ? f.minPopularity : undefined;
  const guest = f.guestFrequency?.length ? f.guestFrequency : undefined;
  const signals = f.formatSignals?.length ? f.formatSignals : undefined;
  const perWeek = f.minEpisodesPerWeek !== undefined || f.maxEpisodesPerWeek !== undefined;
  // one function of plain conditions: a page may test every show of the catalog
  const matches = (s: Show) => {
    if (f.slug !== undefined && s.slug !== f.slug) return false;
    if (language !== undefined && s.language !== language) return false;
    if (f.suitabilityTier !== undefined && s.tier !== f.suitabilityTier) return false;
    if (minPopularity !== undefined && !(s.popularity >= minPopularity)) return false;
    if (guest !== undefined && (s.guest === null || !guest.includes(s.guest))) return false;
    if (signals !== undefined && !s.signals?.some((signal) => signals.includes(signal))) return false;
    if (f.hasAds !== undefined && s.hasAds !== f.hasAds) return false;
    if (f.hasVideo !== undefined && s.hasVideo !== f.hasVideo) return false;
    if (f.minAvgMinutes !== undefined && !(s.avgMinutes >= f.minAvgMinutes)) return false;
    if (f.maxAvgMinutes !== undefined && !(s.avgMinutes <= f.maxAvgMinutes)) return false;
    if (f.publishingStatus === 'active' && !(s.latest >= windowStart)) return false;
    if (f.publishingStatus === 'dormant' && !(s.latest < windowStart)) return false;
    if (perWeek) {
      if (!(s.first <= trackedBefore)) return false;
      const rate = inWindow(s) / (ACTIVE_WINDOW_DAYS / 7);
      if (f.minEpisodesPerWeek !== undefined && !(rate >= f.minEpisodesPerWeek)) return false;
      if (f.maxEpisodesPerWeek !== undefined && !(rate <= f.maxEpisodesPerWeek)) return false;
    }
    return true;
  };

  const out: PodcastItemStamp[] = [];
  if (limit <= 0) return out;
  let skip = offset;
  /** Takes the show when it matches; true when the page is full. */
  const take = (show: Show) => {
    if (!matches(show)) return false;
    if (skip > 0) {
      skip--;
      return false;
    }
    out.push({
      id: show.id,
      version: show.version,
      episodes_in_window: Number.isNaN(show.first) ? null : inWindow(show),
    });
    return out.length >= limit;
  };
  if (ancestry === undefined) {
    const all = state.all;
    for (let i = 0; i < all.length; i++) if (take(all[i] as Show)) break;
    return out;
  }
  const list = state.ancestries.get(ancestry);
  if (!list) return out;
  const { shows, shares } = list;
  if (f.sort === 'relevance') {
    // in share order: the rest are below the share a topic_id asks
    for (let i = 0; i < shows.length && (shares[i] as number) >= TOPIC_SHARE; i++)
      if (take(shows[i] as Show)) break;
    return out;
  }
  list.byPopularity ??= shows.filter((_, i) => (shares[i] as number) >= TOPIC_SHARE).sort(byPopularity);
  const order = list.byPopularity;
  for (let i = 0; i < order.length; i++) if (take(order[i] as Show)) break;
  return out;
}
