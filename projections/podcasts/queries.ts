import { codePointCompare } from '../../src/catalog/code-points.ts';
import { ACTIVE_WINDOW_DAYS, BRIEFLY_TRACKED_DAYS } from '../../src/catalog/format-rules.ts';
import { Params } from '../../src/catalog/sql.ts';
import type { TitleHits, TitleQuery } from '../../src/catalog/title-trigrams.ts';
import type { Queryable } from '../../src/db/db.ts';
import { type BestRankRow, bestRankOf } from '../chart_captures/queries.ts';

export type MatchQuality = 'exact' | 'prefix' | 'fuzzy' | 'description';

export interface PodcastFilters {
  /** The query in search-key form (searchKey); empty means none. */
  q?: string;
  sort: 'relevance' | 'popularity';
  slug?: string;
  /** A topic_id: shows where the ancestry it names (or a topic below it) is at least 20% of episodes. */
  topicId?: string;
  language?: string;
  suitabilityTier?: string;
  minPopularity?: number;
  guestFrequency?: string[];
  formatSignals?: string[];
  hasAds?: boolean;
  hasVideo?: boolean;
  minAvgMinutes?: number;
  maxAvgMinutes?: number;
  minEpisodesPerWeek?: number;
  maxEpisodesPerWeek?: number;
  publishingStatus?: 'active' | 'dormant';
  now: Date;
  /** With q: its title matches as the list index found them (docs/catalog.md, "Title matches in memory"). */
  titleHits?: SeenTitleHits;
}

/**
 * A search's title matches computed in the api process from the catalog as snapshot `seen` (a
 * pg_snapshot as text) saw it, with each show's popularity as it saw it (null when none); the
 * statement finds those of shows written since (migration 0268).
 */
export type SeenTitleHits = TitleHits & { seen: string; popularities: (number | null)[] };

/** The share of a show's episodes a topic must reach for topic_id to match it. */
export const TOPIC_SHARE = 0.2;
/** Words too common in show titles to find candidates by: they would match much of the catalog. */
const COMMON_WORDS = new Set(
  'a an and at by de del der des di du el en for from in la las le les los my of on our the to with your podcast podcasts show radio hour episode episodes ep season new best daily weekly'.split(
    ' ',
  ),
);

/** The words of q that can find a show whose whole title is inside q (a query with extra words). */
export const distinctiveWords = (q: string) => [
  ...new Set(q.split(' ').filter((w) => w.length >= 3 && !COMMON_WORDS.has(w))),
];

/** q's words as the title matches take them (podcast_title_hits, TitleTrigrams). */
export const titleQuery = (q: string): TitleQuery => ({
  q,
  words: distinctiveWords(q),
  allWords: [...new Set(q.split(' '))],
});

/** Pasted episode titles are long; shorter queries would match far too many episode titles. */
const EPISODE_TITLE_MIN_WORDS = 4;

/**
 * Candidate shows for q with a score in [0, 1] and a match quality: by title (trigram similarity
 * either way round, so missing and extra words cost little; podcast_title_hits, migration 0235),
 * by an episode's title (a pasted episode title), or by description words only; `ranked` holds
 * each show once with its best quality and score.
 *
 * `top`, when the page's rows are only the search's (no other filter): the page needs the first
 * `top.rows` of the ranking at most, so `ranked` keeps those (in the page's order), and a search
 * by relevance with at least that many titles equal to q or starting with it (which rank before any
 * other match) looks for no other title candidates (docs/catalog.md, "Forgiving search").
 */
function searchHits(
  params: Params,
  q: string,
  given: SeenTitleHits | undefined,
  top: { rows: number; sort: 'relevance' | 'popularity' } | undefined,
  prune: boolean,
): { sql: string; stale?: string } {
  const query = params.p(q, 'text');
  const title = titleQuery(q);
  const words = params.p(title.words, 'text[]');
  const allWords = params.p(title.allWords, 'text[]');
  const rows = top && params.p(top.rows, 'int');
  const enough = top?.sort === 'relevance' ? rows : '0';
  const byEpisodes = q.split(' ').length >= EPISODE_TITLE_MIN_WORDS;
  const pruned =
    prune && given && top ? withoutOutranked(given, top, byEpisodes ? 1 : DESCRIPTION_SCORE) : undefined;
  const sent = pruned ?? given;
  const ownHits = sent && sent.ids.length + sent.others.length <= MAX_GIVEN_HITS ? sent : undefined;
  const seen = ownHits && params.p(ownHits.seen, 'text');
  const givenIds = ownHits && params.p(ownHits.ids, 'text[]');
  const episodes = byEpisodes
    ? `union all
         select m.podcast_id, 'fuzzy', m.score * 0.95, p.popularity
           from podcast_episode_title_matches(${query}, 0.5) m join podcasts p on p.id = m.podcast_id`
    : '';
  const order =
    top?.sort === 'relevance'
      ? "(quality = 'exact') desc, (quality = 'prefix') desc, score desc, popularity desc nulls last, id"
      : 'popularity desc nulls last, id';
  const sql = `
    ${seen ? `${unseenShows(seen)},` : ''}
    hits (id, quality, score, popularity) as (
      ${ownHits && seen && givenIds ? givenTitleHits(params, query, words, allWords, ownHits, seen, givenIds) : `select * from podcast_title_hits(${query}, ${words}, ${allWords}, ${enough})`}
      ${episodes}
      union all
      select p.id, 'description', ${DESCRIPTION_SCORE}, p.popularity
        from podcasts p
       where to_tsvector('simple', coalesce(p.search_description, '')) @@ plainto_tsquery('simple', ${query})
    ),
    ranked as (
      select * from (
        select id, (array_agg(quality order by case quality when 'exact' then 0 when 'prefix' then 1
                                                            when 'fuzzy' then 2 else 3 end))[1] as quality,
               max(score) as score, max(popularity) as popularity
          from hits group by id) shows
       ${top ? `order by ${order} limit ${rows}` : ''}
    )`;
  // The outranked hits were left out on the assurance that the kept ones stay; one of them written
  // or removed since the snapshot voids it.
  return ownHits && pruned
    ? { sql, stale: `exists (select 1 from unseen_shows where id = any(${givenIds}))` }
    : { sql };
}

/** Past this many title matches to send, the trigram index finds them for less than their parameters cost. */
const MAX_GIVEN_HITS = 2_000;
/** The score of a match by description words only. */
const DESCRIPTION_SCORE = 0.25;
const QUALITY_RANK = { exact: 0, prefix: 1, fuzzy: 2 } as const;

/**
 * Given title hits less those that cannot be among the first `top.rows` of the ranking: a show's
 * other hits (its episodes', its description's) never better its title's quality, and raise its
 * score to at most `cap`, so a hit ranks at worst as its own quality and score say and at best as
 * its quality and the greater of its score and `cap` say. A hit whose best ranks after the worst of
 * the first `top.rows` is outranked whatever their other hits. Ids break ties by code point: the
 * list index gives hits only from a database that sorts them so. Undefined when none is left out.
 * Valid while none of the kept shows is written or removed since the snapshot.
 */
export function withoutOutranked(
  given: SeenTitleHits,
  top: { rows: number; sort: 'relevance' | 'popularity' },
  cap: number,
): SeenTitleHits | undefined {
  const n = given.ids.length;
  // the assurance counts shows: each once
  if (n <= top.rows || new Set(given.ids).size !== n) return undefined;
  const { ids, qualities, scores, popularities } = given;
  const quality = (i: number) => QUALITY_RANK[qualities[i] as keyof typeof QUALITY_RANK];
  const score = (i: number) => scores[i] as number;
  const popularity = (i: number) => popularities[i] ?? null;
  // negative when hit a, with score sa, ranks before hit b with score sb
  const compare = (a: number, sa: number, b: number, sb: number) => {
    if (top.sort === 'relevance' && quality(a) !== quality(b)) return quality(a) - quality(b);
    if (top.sort === 'relevance' && sa !== sb) return sb - sa;
    const pa = popularity(a);
    const pb = popularity(b);
    if (pa !== pb) return pa === null ? 1 : pb === null ? -1 : pb - pa;
    return codePointCompare(ids[a] as string, ids[b] as string);
  };
  const worst = nthFirst(n, top.rows, (a, b) => compare(a, score(a), b, score(b)));
  const keep: number[] = [];
  for (let i = 0; i < n; i++) if (compare(i, Math.max(score(i), cap), worst, score(worst)) <= 0) keep.push(i);
  if (keep.length === n) return undefined;
  return {
    ...given,
    ids: keep.map((i) => ids[i] as string),
    qualities: keep.map((i) => qualities[i] as TitleHits['qualities'][number]),
    scores: keep.map(score),
    popularities: keep.map(popularity),
  };
}

/** Of 0 … n - 1 ordered by `compare`, the k-th (1 ≤ k ≤ n): a heap of the first k seen, the last on top. */
function nthFirst(n: number, k: number, compare: (a: number, b: number) => number): number {
  const heap: number[] = [];
  const sink = (at: number) => {
    for (;;) {
      const left = 2 * at + 1;
      const right = left + 1;
      let last = at;
      if (left < heap.length && compare(heap[left] as number, heap[last] as number) > 0) last = left;
      if (right < heap.length && compare(heap[right] as number, heap[last] as number) > 0) last = right;
      if (last === at) return;
      [heap[at], heap[last]] = [heap[last] as number, heap[at] as number];
      at = last;
    }
  };
  for (let i = 0; i < n; i++) {
    if (heap.length < k) {
      heap.push(i);
      for (let at = heap.length - 1; at > 0; ) {
        const parent = (at - 1) >> 1;
        if (compare(heap[at] as number, heap[parent] as number) <= 0) break;
        [heap[at], heap[parent]] = [heap[parent] as number, heap[at] as number];
        at = parent;
      }
    } else if (compare(i, heap[0] as number) < 0) {
      heap[0] = i;
      sink(0);
    }
  }
  return heap[0] as number;
}

/**
 * SQL: the CTE `unseen_shows`, the shows written or removed since the snapshot `seen`
 * (podcasts_written_since in FROM, where PostgreSQL inlines it: called in a select list, it planned
 * its statement on every call).
 */
const unseenShows = (seen: string) => `
    unseen_shows (id) as (
      select w from podcasts_written_since(${seen}) w
      union all
      select r.podcast_id from podcast_list_removed r
       where r.changed >= pg_snapshot_xmin(${seen}::pg_snapshot)
         and not pg_visible_in_snapshot(r.changed, ${seen}::pg_snapshot)
    )`;

/**
 * The title matches the api process found, less those of shows written or removed since its
 * snapshot, and the matches podcast_title_hits_among finds among the shows written since and the
 * ones it left to it (migration 0268). A show the snapshot saw and no transaction wrote since has
 * the popularity the snapshot saw, so the statement does not read it again.
 */
function givenTitleHits(
  params: Params,
  query: string,
  words: string,
  allWords: string,
  given: SeenTitleHits,
  seen: string,
  ids: string,
) {
  const others = params.p(given.others, 'text[]');
  return `select h.id, h.quality, h.score, h.popularity
            from unnest(${ids}, ${params.p(given.qualities, 'text[]')},
                        ${params.p(given.scores, 'float8[]')}, ${params.p(given.popularities, 'float8[]')})
                 as h(id, quality, score, popularity)
           where h.id not in (select id from unseen_shows)
          union all
          select * from podcast_title_hits_among(${query}, ${words}, ${allWords}, ${others}, ${seen})
           -- its candidates are these shows: none, and it is not called
           where cardinality(${others}) > 0 or exists (select 1 from unseen_shows)`;
}

/**
 * A page's statement up to its `page` CTE (the page's ids, match qualities and ranks), and its
 * parameters. `prune`: given title hits that cannot reach the page may be left out; `stale` is then
 * the SQL of a boolean telling that the page must be read again without.
 */
function pageStatement(f: PodcastFilters, limit: number, offset: number, prune = false) {
  const params = new Params();
  const ctes: string[] = [];
  const where: string[] = [];
  const order: string[] = [];
  // Bound only when a filter reads it: an unused parameter has no type PostgreSQL can infer.
  let nowParam: string | undefined;
  const now = () => (nowParam ??= params.p(f.now, 'timestamptz'));
  const windowStart = () => `(${now()} - interval '${ACTIVE_WINDOW_DAYS} days')`;

  const q = f.q ?? '';
  // The show's own rows, or with topic_id its rows for the ancestry (a declared topic's share is 1).
  const ancestry = f.topicId === undefined ? "''" : topicAncestry(params.p(f.topicId, 'text'));
  where.push(`l.ancestry = ${ancestry}`);
  if (f.topicId !== undefined) where.push(`l.share >= ${TOPIC_SHARE}`);
  if (f.slug !== undefined) where.push(`l.slug = ${params.p(f.slug, 'text')}`);
  if (f.language !== undefined) where.push(`l.language = ${params.p(f.language.toLowerCase(), 'text')}`);
  if (f.suitabilityTier !== undefined)
    where.push(`l.suitability_tier = ${params.p(f.suitabilityTier, 'text')}`);
  if (f.minPopularity !== undefined && f.minPopularity > 0)
    where.push(`l.popularity >= ${params.p(f.minPopularity, 'float8')}`);
  if (f.guestFrequency?.length)
    where.push(`l.guest_frequency = any(${params.p(f.guestFrequency, 'text[]')})`);
  if (f.formatSignals?.length) where.push(`l.signals && ${params.p(f.formatSignals, 'text[]')}`);
  if (f.hasAds !== undefined) where.push(`l.has_ads = ${params.p(f.hasAds, 'boolean')}`);
  if (f.hasVideo !== undefined) where.push(`l.has_video = ${params.p(f.hasVideo, 'boolean')}`);
  if (f.minAvgMinutes !== undefined)
    where.push(`l.avg_episode_minutes >= ${params.p(f.minAvgMinutes, 'float8')}`);
  if (f.maxAvgMinutes !== undefined)
    where.push(`l.avg_episode_minutes <= ${params.p(f.maxAvgMinutes, 'float8')}`);
  if (f.minEpisodesPerWeek !== undefined || f.maxEpisodesPerWeek !== undefined) {
    where.push(`l.first_episode_published_at <= ${now()} - interval '${BRIEFLY_TRACKED_DAYS} days'`);
    const perWeek = `((select count(*) from podcast_format_episodes fe
                        where fe.podcast_id = l.podcast_id and fe.published_at > ${windowStart()}
                          and fe.published_at <= ${now()})::float8 / ${ACTIVE_WINDOW_DAYS / 7})`;
    if (f.minEpisodesPerWeek !== undefined)
      where.push(`${perWeek} >= ${params.p(f.minEpisodesPerWeek, 'float8')}`);
    if (f.maxEpisodesPerWeek !== undefined)
      where.push(`${perWeek} <= ${params.p(f.maxEpisodesPerWeek, 'float8')}`);
  }
  if (f.publishingStatus === 'active') where.push(`l.latest_episode_published_at >= ${windowStart()}`);
  if (f.publishingStatus === 'dormant') where.push(`l.latest_episode_published_at < ${windowStart()}`);

  // The search's hits are ranked before the page's CTE; with no other filter its rows are the page's.
  let stale: string | undefined;
  if (q) {
    const hits = searchHits(
      params,
      q,
      f.titleHits,
      f.topicId === undefined && where.length === 1 ? { rows: offset + limit, sort: f.sort } : undefined,
      prune,
    );
    ctes.push(hits.sql);
    stale = hits.stale;
  }
  if (q && f.sort === 'relevance')
    order.push("(r.quality = 'exact') desc", "(r.quality = 'prefix') desc", 'r.score desc');
  else if (f.topicId !== undefined && f.sort === 'relevance') order.push('l.share desc');
  order.push('l.popularity desc nulls last', 'l.podcast_id');

  // The page's rank is numbered in the page's own order: the items are read in a join that keeps none.
  ctes.push(`
    page as (
      select l.podcast_id as id, ${q ? 'r.quality' : 'null::text'} as quality,
             row_number() over (order by ${order.join(', ')}) as rank
        from podcast_list l
        ${q ? 'join ranked r on r.id = l.podcast_id' : ''}
       where ${where.join(' and ')}
       order by ${order.join(', ')}
       limit ${params.p(limit, 'int')} offset ${params.p(offset, 'int')}
    )`);
  return { with: `with ${ctes.join(',')}`, params, now, stale };
}

/**
 * One page of shows matching the filters, in the order the spec asks for, read with their items
 * (podcastItemRows) in the same statement.
 */
export async function listPodcastItems(
  db: Queryable,
  f: PodcastFilters,
  limit: number,
  offset: number,
): Promise<PodcastItemRow[]> {
  const page = pageStatement(f, limit, offset);
  const { rows } = await db.query<ItemRowColumns & { quality: MatchQuality | null }>(
    `${page.with}
     select page.quality, ${itemColumns(page.now())}
       from page join podcasts p on p.id = page.id ${ITEM_JOINS}
      order by page.rank`,
    page.params.values,
  );
  return rows.map(({ quality, ...row }) => ({
    ...itemOf(row, ITEM_TOPICS),
    ...(quality ? { matchQuality: quality } : {}),
  }));
}

/**
 * The same page as listPodcastItems, each show by its item's version and the episodes of the
 * trailing window before now only: what an item rendered for that version needs
 * (src/catalog/podcast-items.ts, docs/catalog.md, "Items rendered once").
 */
export async function listPodcastStamps(
  db: Queryable,
  f: PodcastFilters,
  limit: number,
  offset: number,
  prune = true,
): Promise<PodcastItemStamp[]> {
  const page = pageStatement(f, limit, offset, prune);
  const stamps = `page join podcast_list li on li.podcast_id = page.id and li.ancestry = ''`;
  type Row = Omit<PodcastItemStamp, 'id'> & {
    id: string | null;
    quality: MatchQuality | null;
    stale?: boolean;
  };
  const { rows } = await db.query<Row>(
    page.stale
      ? // a row at least, for the flag, when the page is empty
        `${page.with}
         select s.stale, page.quality, ${stampColumns(page.now())}
           from (select ${page.stale} as stale) s left join (${stamps}) on true
          order by page.rank`
      : `${page.with}
         select page.quality, ${stampColumns(page.now())} from ${stamps} order by page.rank`,
    page.params.values,
  );
  if (rows[0]?.stale) return listPodcastStamps(db, f, limit, offset, false);
  return rows.flatMap(({ quality, stale: _, id, ...stamp }) =>
    id === null ? [] : [{ ...stamp, id, ...(quality ? { matchQuality: quality } : {}) }],
  );
}

/** Shows' stamps (listPodcastStamps) by id, in no particular order. */
export async function podcastItemStamps(
  db: Queryable,
  ids: readonly string[],
  now: Date,
): Promise<PodcastItemStamp[]> {
  const { rows } = await db.query<PodcastItemStamp>(
    `select ${stampColumns('$2::timestamptz')} from podcast_list li
      where li.podcast_id = any($1::text[]) and li.ancestry = ''`,
    [ids, now],
  );
  return rows;
}

export interface PodcastRow {
  id: string;
  title: string;
  slug: string | null;
  description: string | null;
  url: string | null;
  image_url: string | null;
  language: string | null;
  explicit: boolean | null;
  popularity: number | null;
  bias: string | null;
  political_context: string | null;
  suitability_tier: string | null;
  has_video: boolean | null;
  feed_url: string | null;
  apple_id: string | null;
  directory_ids: Record<string, string> | null;
  publisher: { id?: string; name?: string; slug?: string } | null;
  episode_count: number;
  episodes_in_window: number;
}

export interface FormatRow {
  podcast_id: string;
  episode_count: number;
  analyzed_episodes: number;
  ad_episode_rate: number;
  call_in_episode_rate: number;
  guest_episode_rate: number;
  panel_episode_rate: number;
  solo_episode_rate: number;
  has_video: boolean;
  publish_days: Record<string, number>;
  avg_episode_minutes: number | null;
  episode_minutes_median: number | null;
  episode_minutes_p25: number | null;
  episode_minutes_p75: number | null;
  first_episode_published_at: Date;
  latest_episode_published_at: Date;
  guest_frequency: string | null;
  has_ads: boolean | null;
  signals: string[];
  computed_at: Date;
  /** Episodes published in the trailing window before now. */
  episodes_in_window: number;
}

const PODCAST_COLUMNS = `p.id, p.title, p.slug, p.description, p.url, p.image_url, p.language, p.explicit,
  p.popularity, p.bias, p.political_context, p.suitability_tier, p.has_video, p.feed_url, p.apple_id,
  p.directory_ids, p.publisher`;

/** What a reference to a show holds (src/catalog/views.ts, toPodcastReference). */
export type PodcastReferenceRow = Pick<
  PodcastByIdRow,
  'id' | 'title' | 'slug' | 'image_url' | 'popularity' | 'publisher' | 'best_rank'
>;

/** A show as read by id: its row, episode count and best rank. */
export type PodcastByIdRow = PodcastRow & { best_rank: BestRankRow | null };

/** SQL: the reference row of the show `podcastId` names as JSON (null when none), to read it with what refers to it. */
export const podcastReferenceOf = (podcastId: string) =>
  `(select json_build_object('id', p.id, 'title', p.title, 'slug', p.slug, 'image_url', p.image_url,
                             'popularity', p.popularity, 'publisher', p.publisher, 'best_rank', ${bestRankOf('p.id')})
      from podcasts p where p.id = ${podcastId})`;

/** Shows by id, in no particular order, each with its episode count and best rank. */
export async function podcastsByIds(db: Queryable, ids: readonly string[]): Promise<PodcastByIdRow[]> {
  const { rows } = await db.query<PodcastByIdRow>(
    `select ${PODCAST_COLUMNS}, coalesce(fm.episode_count, 0) as episode_count, ${bestRankOf('p.id')} as best_rank
       from podcasts p left join podcast_formats fm on fm.podcast_id = p.id
      where p.id = any($1::text[])`,
    [ids],
  );
  return rows;
}

/** Format profiles by podcast id, each with the episodes of the trailing window before now. */
export async function formatsByIds(db: Queryable, ids: readonly string[], now: Date): Promise<FormatRow[]> {
  const { rows } = await db.query<FormatRow>(
    `select fm.*, (select count(*)::int from podcast_format_episodes fe
                    where fe.podcast_id = fm.podcast_id
                      and fe.published_at > $2::timestamptz - interval '${ACTIVE_WINDOW_DAYS} days'
                      and fe.published_at <= $2::timestamptz) as episodes_in_window
       from podcast_formats fm where fm.podcast_id = any($1::text[])`,
    [ids, now],
  );
  return rows;
}

/**
 * A show by id, slug or numeric Apple directory id, in that order of precedence (an id always
 * wins; among shows sharing a slug, the most popular).
 */
export async function resolvePodcastId(db: Queryable, ref: string): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>(
    `select id from podcasts where id = $1::text
     union all (select id from podcasts where slug = $1::text order by popularity desc nulls last, id limit 1)
     union all (select id from podcasts where apple_id = $1::text and $1::text ~ '^[0-9]+$'
                 order by popularity desc nulls last, id limit 1)
     limit 1`,
    [ref],
  );
  return rows[0]?.id ?? null;
}

/** Shows by Apple directory id. */
export async function podcastIdsByApple(
  db: Queryable,
  appleIds: readonly string[],
): Promise<Map<string, string>> {
  const { rows } = await db.query<{ id: string; apple_id: string }>(
    `select distinct on (apple_id) id, apple_id from podcasts where apple_id = any($1::text[])
      order by apple_id, popularity desc nulls last, id`,
    [appleIds],
  );
  return new Map(rows.map((row) => [row.apple_id, row.id]));
}

/**
 * The most popular show holding each identifier under `platform`. Each identifier is one look-up of
 * the index podcasts_directory_ids (migration 0264; directory ids are strings, so containment is
 * equality), not a read of every show (docs/catalog.md, "What a page reads").
 */
export async function podcastIdsByDirectory(
  db: Queryable,
  platform: string,
  identifiers: readonly string[],
): Promise<Map<string, string>> {
  const { rows } = await db.query<{ id: string; identifier: string }>(
    `select distinct on (i.identifier) p.id, i.identifier
       from unnest($2::text[]) i(identifier)
       join podcasts p on p.directory_ids @> jsonb_build_object($1::text, i.identifier)
      order by i.identifier, p.popularity desc nulls last, p.id`,
    [platform, identifiers],
  );
  return new Map(rows.map((row) => [row.identifier, row.id]));
}

export interface TopicRow {
  podcast_id: string;
  id: string;
  name: string;
  slug: string | null;
  ancestry: string;
  ancestry_path: string;
  episode_count: number;
}

/** What the compact format of a show's item reads from its profile (src/catalog/views.ts, toCompactFormat). */
export type CompactFormatRow = Pick<
  FormatRow,
  | 'has_video'
  | 'avg_episode_minutes'
  | 'first_episode_published_at'
  | 'latest_episode_published_at'
  | 'guest_frequency'
  | 'has_ads'
  | 'signals'
  | 'episodes_in_window'
>;

/**
 * The version of a show's item: the transaction that last wrote its list row (`xmin`), which every
 * change of what the item shows writes again (podcast_list, migration 0221). It is the same in every
 * api process; a transaction commits one state of a row, so a version names one item.
 */
const ITEM_VERSION = 'li.xmin::text';

/** A show's item by its version, with the episodes of its trailing window before now. */
export interface PodcastItemStamp {
  id: string;
  version: string;
  /** Null without a format profile. */
  episodes_in_window: number | null;
  /** Set by a search (q). */
  matchQuality?: MatchQuality;
}

/** A show's item: its row, its compact format profile (when it has episodes) and its topics. */
export interface PodcastItemRow {
  /** Its version (PodcastItemStamp). */
  version: string;
  podcast: PodcastRow;
  format?: CompactFormatRow;
  topics: TopicRow[];
  /** Set by a search (q). */
  matchQuality?: MatchQuality;
}

/** The topics a show's item lists in a list's page. */
export const ITEM_TOPICS = 10;

/**
 * An item's row: the format's fields as columns (fm_*; null without a profile), its instants as
 * epoch milliseconds: as text they would be in the session's time zone, which a Date cannot always
 * read (year 10000 east of UTC, offsets in seconds).
 */
type ItemRowColumns = PodcastRow & {
  fm_has_video: boolean | null;
  fm_avg_episode_minutes: number | null;
  fm_first_episode_published_at: number | null;
  fm_latest_episode_published_at: number | null;
  fm_guest_frequency: string | null;
  fm_has_ads: boolean | null;
  fm_signals: string[] | null;
  fm_episodes_in_window: number | null;
  topics: TopicRow[];
  version: string;
};

/** SQL: an instant as whole epoch milliseconds (what a Date holds: the microseconds dropped). */
const epochMs = (instant: string) => `floor(extract(epoch from ${instant}) * 1000)::float8`;

/** SQL: what an item reads besides its show `p`: its format profile and its own list row (its topics). */
const ITEM_JOINS = `left join podcast_formats fm on fm.podcast_id = p.id
  join podcast_list li on li.podcast_id = p.id and li.ancestry = ''`;

/**
 * SQL: the columns of a show's item over ITEM_JOINS: its row, the fields of its format profile its
 * compact format shows, with the episodes of the trailing window before `now`, and its topics (all
 * of them: itemOf keeps the first). Columns, not JSON: the driver parses no JSON for them. One
 * statement reads a whole page: each statement costs a round trip and a plan of its own
 * (docs/catalog.md, "The lists without the cache").
 */
const itemColumns = (now: string) =>
  `${PODCAST_COLUMNS}, coalesce(fm.episode_count, 0) as episode_count,
   fm.has_video as fm_has_video, fm.avg_episode_minutes as fm_avg_episode_minutes,
   ${epochMs('fm.first_episode_published_at')} as fm_first_episode_published_at,
   ${epochMs('fm.latest_episode_published_at')} as fm_latest_episode_published_at,
   fm.guest_frequency as fm_guest_frequency, fm.has_ads as fm_has_ads, fm.signals as fm_signals,
   case when fm.podcast_id is not null then ${windowCount('fm.podcast_id', now)} end as fm_episodes_in_window,
   li.topics, ${ITEM_VERSION} as version`;

/** SQL: a show's episodes published in the trailing window before `now`. */
const windowCount = (podcastId: string, now: string) =>
  `(select count(*)::int from podcast_format_episodes fe
     where fe.podcast_id = ${podcastId}
       and fe.published_at > ${now} - interval '${ACTIVE_WINDOW_DAYS} days'
       and fe.published_at <= ${now})`;

/** SQL: a PodcastItemStamp's columns over its list row `li` (a profile's instants are never null). */
const stampColumns = (now: string) =>
  `li.podcast_id as id, ${ITEM_VERSION} as version,
   case when li.first_episode_published_at is not null then ${windowCount('li.podcast_id', now)} end
     as episodes_in_window`;

/** An item from its columns, with the first `topicLimit` of its topics. */
function itemOf(row: ItemRowColumns, topicLimit: number): PodcastItemRow {
  const {
    fm_has_video,
    fm_avg_episode_minutes,
    fm_first_episode_published_at,
    fm_latest_episode_published_at,
    fm_guest_frequency,
    fm_has_ads,
    fm_signals,
    fm_episodes_in_window,
    topics,
    version,
    ...podcast
  } = row;
  const item: PodcastItemRow = { version, podcast, topics: topics.slice(0, topicLimit) };
  // A profile has its instants (not null): their column is null only without one.
  if (fm_first_episode_published_at !== null)
    item.format = {
      has_video: fm_has_video as boolean,
      avg_episode_minutes: fm_avg_episode_minutes,
      first_episode_published_at: new Date(fm_first_episode_published_at),
      latest_episode_published_at: new Date(fm_latest_episode_published_at as number),
      guest_frequency: fm_guest_frequency,
      has_ads: fm_has_ads,
      signals: fm_signals as string[],
      episodes_in_window: fm_episodes_in_window as number,
    };
  return item;
}

/** Shows' items by id, in no particular order. */
export async function podcastItemRows(
  db: Queryable,
  ids: readonly string[],
  now: Date,
  topicLimit: number,
): Promise<PodcastItemRow[]> {
  const { rows } = await db.query<ItemRowColumns>(
    `select ${itemColumns('$2::timestamptz')} from podcasts p ${ITEM_JOINS} where p.id = any($1::text[])`,
    [ids, now],
  );
  return rows.map((row) => itemOf(row, topicLimit));
}

/**
 * SQL: the ancestry a topic_id names: a topic's id, its ancestry path hash, or an ancestry itself.
 * Read in the page's statement: one round trip less a request.
 */
export const topicAncestry = (topicId: string) =>
  `coalesce((select ancestry from (
      (select ancestry from catalog_episode_topics where topic_id = ${topicId} limit 1)
      union all (select ancestry from catalog_episode_topics where ancestry_path = ${topicId} limit 1)
      union all (select coalesce(d->>'ancestry', d->>'slug', d->>'id')
                   from podcasts p, jsonb_array_elements(p.topics) d
                  where p.id = any(array(select id from podcasts
                                          where topics @> jsonb_build_array(jsonb_build_object('id', ${topicId}))))
                    and d->>'id' = ${topicId} limit 1)) named limit 1), ${topicId})`;
