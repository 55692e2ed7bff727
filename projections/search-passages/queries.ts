import { exactInstant, Params } from '../../src/catalog/sql.ts';
import type { Queryable } from '../../src/db/db.ts';
import { episodeLanguageIs } from '../catalog-episodes/queries.ts';
import {
  anyTerm,
  everyTerm,
  PASSAGE_LINES,
  passageStarts,
  STARTS_MASK,
  STRIDE,
  startsOf,
  type Term,
  termLines,
} from './passages.ts';

/** The episodes a search or mention list may return (docs/search.md, "Filters"). */
export interface EpisodeScope {
  podcastId?: string;
  episodeId?: string;
  /** ISO 639-1 code matched on the primary subtag of the episode's language (its own, else its show's). */
  language?: string;
  since?: Date;
  until?: Date;
  /** Episodes that mention the entity (producer or detected); with `speaking`, also those it speaks in. */
  entity?: { id: string; names: readonly Term[]; speaking: boolean };
  /** Episodes whose producer mentions or linked speakers include an entity of this type. */
  entityType?: string;
  /** The entity speaks in the episode in this role. */
  role?: string;
}

export interface KeywordFilter {
  terms: readonly Term[];
  /** true: every term inside one passage; false: any term, ranked. */
  all: boolean;
}

/** The candidate rows of a keyword filter: every term in the row (`all`) or any term. */
const keywordQuery = (k: KeywordFilter) => (k.all ? everyTerm(k.terms) : anyTerm(k.terms));

/**
 * A keyword filter's candidate rows `w` (the GIN step) with the mask of their matching passages
 * (the exact step on the positions, docs/search.md, "Index design"), computed in the scan (offset
 * 0) so nothing later carries the tsvectors; rows without a matching passage are left out.
 */
function matchingRows(params: Params, k: KeywordFilter, where: string[]) {
  const q = params.p(keywordQuery(k), 'tsquery');
  const mask = passageStarts('w.words', k.terms, k.all, params);
  return `(select * from (select w.episode_id, w.start, ${mask} as mask
                            from search_passage_rows w ${whereOf([`w.words @@ ${q}`, ...where])} offset 0) c
            where c.mask <> 0)`;
}

/**
 * The matching rows of a keyword filter with their ts_rank, for ranking episodes. Only `all` with
 * several terms needs the exact step to know which rows match (every row holding a single term or
 * any term has a passage holding it); the rank is computed only for the rows that match.
 */
function rankedRows(params: Params, k: KeywordFilter, where: string[]) {
  const q = params.p(keywordQuery(k), 'tsquery');
  const checked = k.all && k.terms.length > 1;
  const mask = checked ? `, ${passageStarts('w.words', k.terms, true, params)} as mask` : '';
  return `(select c.episode_id, c.start, ts_rank('{1,1,1,1}', c.words, ${q}, 32) as rank
             from (select w.episode_id, w.start, w.words${mask}
                     from search_passage_rows w ${whereOf([`w.words @@ ${q}`, ...where])} offset 0) c
            ${checked ? 'where c.mask <> 0' : ''} offset 0)`;
}

/** SQL: the lines of row `words` (a bit per own line) that hold any of the names. */
const nameLines = (params: Params, words: string, names: readonly Term[]) =>
  `((${names.map((n) => termLines(words, n, params)).join(' | ')}) & ${STARTS_MASK})`;

/** The entity is a linked speaker of episode `e` in this role. */
const roleCondition = (params: Params, entityId: string, role: string) =>
  `e.speakers @> jsonb_build_array(jsonb_build_object('entity_id', ${params.p(entityId, 'text')}, 'role', ${params.p(role, 'text')}))`;

/** Conditions on catalog_episodes `e` for a scope; `within` (an array of ids) bounds the detection. */
function scopeConditions(params: Params, s: EpisodeScope, within?: string): string[] {
  const where: string[] = [];
  if (s.podcastId !== undefined) where.push(`e.podcast_id = ${params.p(s.podcastId, 'text')}`);
  if (s.episodeId !== undefined) where.push(`e.id = ${params.p(s.episodeId, 'text')}`);
  if (s.language !== undefined)
    where.push(episodeLanguageIs('e', params.p(s.language.toLowerCase(), 'text')));
  if (s.since) where.push(`e.published_at >= ${params.p(s.since, 'timestamptz')}`);
  if (s.until) where.push(`e.published_at < ${params.p(s.until, 'timestamptz')}`);
  if (s.entity) {
    const id = params.p(s.entity.id, 'text');
    const any = [`e.id in (select m.episode_id from search_mentions m where m.entity_id = ${id})`];
    if (s.entity.names.length)
      any.push(
        `e.id in (select d.episode_id from search_passage_rows d
                   where d.words @@ ${params.p(anyTerm(s.entity.names), 'tsquery')}${within ? ` and d.episode_id = any(${within})` : ''})`,
      );
    if (s.entity.speaking)
      any.push(`e.speakers @> jsonb_build_array(jsonb_build_object('entity_id', ${id}))`);
    where.push(`(${any.join(' or ')})`);
    if (s.role !== undefined) where.push(roleCondition(params, s.entity.id, s.role));
  }
  if (s.entityType !== undefined)
    where.push(`exists (select 1 from entities t
                        where t.id = any(e.entity_ids) and t.entity_type = ${params.p(s.entityType, 'text')})`);
  return where;
}

const whereOf = (where: string[]) => (where.length ? `where ${where.join(' and ')}` : '');

/** Index rows `w` of the episodes passing the scope's conditions: none when it has none. */
const rowsInScope = (where: string[]) =>
  where.length ? [`w.episode_id in (select e.id from catalog_episodes e ${whereOf(where)})`] : [];

export interface EpisodeHit {
  episode_id: string;
  published_at: Date;
  score: number;
  /** First lines of the matching passages, ascending (keyword searches only). */
  starts: number[] | null;
  /** First line of the best passage: the first matching passage of the best-ranked row. */
  best_start: number | null;
}

/** One page of episodes matching the scope and keywords, by relevance or newest first. */
export async function searchEpisodes(
  db: Queryable,
  scope: EpisodeScope,
  keywords: KeywordFilter | undefined,
  sort: 'relevance' | 'recency',
  limit: number,
  offset: number,
  checkedRows = CHECKED_ROWS,
): Promise<EpisodeHit[]> {
  const params = new Params();
  const where = scopeConditions(params, scope);
  if (keywords === undefined) {
    const { rows } = await db.query<EpisodeHit>(
      `select e.id as episode_id, e.published_at, 0::float8 as score, null::int[] as starts, null::int as best_start
         from catalog_episodes e ${whereOf([...where, 'e.has_transcript'])}
        order by e.published_at desc, e.id desc
        limit ${params.p(limit, 'int')} offset ${params.p(offset, 'int')}`,
      params.values,
    );
    return rows;
  }
  const checked = keywords.all && keywords.terms.length > 1;
  const settled =
    checked && sort === 'relevance'
      ? await bestRowsFirst(db, scope, keywords, { offset, limit }, checkedRows)
      : undefined;
  const page = settled ?? (await rankAll(db, params, where, keywords, sort, limit, offset));
  return page.map((hit) => withStarts(hit, hit.masks));
}

/**
 * SQL: the matching passages (start → mask, as two arrays ascending) of each episode `page` (a
 * CTE with episode_id) lists, the exact step on their rows alone; read with the page, in its
 * statement, so a page needs no second round trip.
 */
function pagePassages(params: Params, keywords: KeywordFilter, page: string) {
  return `select w.episode_id, array_agg(w.start order by w.start) as starts, array_agg(w.mask order by w.start) as masks
            from ${matchingRows(params, keywords, [`w.episode_id = any(array(select episode_id from ${page}))`])} w
           group by w.episode_id`;
}

/** start → mask of an episode's matching rows, from pagePassages' two arrays. */
const masksOf = (starts: number[] | null, masks: number[] | null) =>
  new Map((starts ?? []).map((start, k) => [start, masks![k]!]));

/** An episode ranked: its best row's start, and the masks of its matching rows (start → mask). */
interface Ranked {
  episode_id: string;
  published_at: Date;
  score: number;
  bestRow: number;
  masks: Map<number, number>;
}

/** The hit of a ranked episode given its matching rows' masks (start → mask). */
function withStarts(hit: Ranked, masks: ReadonlyMap<number, number>): EpisodeHit {
  const found = [...masks].sort(([a], [b]) => a - b).flatMap(([start, mask]) => startsOf(start, mask));
  return {
    episode_id: hit.episode_id,
    published_at: hit.published_at,
    score: hit.score,
    starts: found,
    best_start: startsOf(hit.bestRow, masks.get(hit.bestRow) ?? 0)[0] ?? found[0] ?? null,
  };
}

/**
 * The episodes of a keyword filter ranked over all their matching rows (a page from \`offset\`):
 * the best rank of each episode and its rows, grouped as the rows come; the scope narrows the rows
 * only when it has conditions. The page's passages are read in the same statement.
 */
async function rankAll(
  db: Queryable,
  params: Params,
  where: string[],
  keywords: KeywordFilter,
  sort: 'relevance' | 'recency',
  limit: number,
  offset: number,
): Promise<Ranked[]> {
  // The page's order, then the same over its CTE (each episode once: fully ordered).
  const order = (m: string, e: string) =>
    sort === 'recency'
      ? `${e}.published_at desc, ${m}.episode_id desc`
      : `${m}.score desc, ${e}.published_at desc, ${m}.episode_id desc`;
  const { rows } = await db.query<{
    episode_id: string;
    published_at: Date;
    score: number;
    starts: number[];
    ranks: number[];
    passage_starts: number[] | null;
    passage_masks: number[] | null;
  }>(
    `with page as materialized (
       select m.episode_id, e.published_at, m.score, m.starts, m.ranks
         from (select w.episode_id, max(w.rank)::float8 as score, array_agg(w.start) as starts,
                      array_agg(w.rank) as ranks
                 from ${rankedRows(params, keywords, rowsInScope(where))} w
                group by w.episode_id) m
         join catalog_episodes e on e.id = m.episode_id
        order by ${order('m', 'e')}
        limit ${params.p(limit, 'int')} offset ${params.p(offset, 'int')})
     select page.*, p.starts as passage_starts, p.masks as passage_masks
       from page left join (${pagePassages(params, keywords, 'page')}) p on p.episode_id = page.episode_id
      order by ${order('page', 'page')}`,
    params.values,
  );
  return rows.map(({ starts, ranks, passage_starts, passage_masks, ...hit }) => {
    // The best row is the highest rank, the one with the first start on a tie.
    let best = 0;
    for (let k = 1; k < starts.length; k++)
      if (ranks[k]! > ranks[best]! || (ranks[k] === ranks[best] && starts[k]! < starts[best]!)) best = k;
    return { ...hit, bestRow: starts[best]!, masks: masksOf(passage_starts, passage_masks) };
  });
}

/**
 * Candidate rows a relevance search on several required terms sorts and may check first, beyond the
 * page's episodes, and matching rows it reads beyond them (docs/search.md, "Ranking the best rows first").
 */
const CHECKED_ROWS = 1024;
const MATCHED_ROWS = 32;

/**
 * The page (\`offset\`, \`limit\`) by relevance of a keyword filter whose terms must all be in one
 * passage, when the \`checkedRows + offset + limit\` best candidate rows settle it; undefined when
 * not. Every candidate row is ranked (ts_rank is cheap beside the exact 5-line check) and the best
 * are sorted as episodes rank (rank, then newest, then id, then start); the check then runs row by
 * row in that order and stops at the \`offset + limit + MATCHED_ROWS\`th matching row. An episode's
 * first matching row in that order is its best, and every episode not met yet ranks below the
 * episodes met, so the first \`offset + limit\` episodes met are the page's and those before it.
 * When the check ran out of candidates, every matching row is known and so are the episodes'
 * passages; else the same statement reads the passages of the page's episodes.
 */
async function bestRowsFirst(
  db: Queryable,
  scope: EpisodeScope,
  keywords: KeywordFilter,
  page: { offset: number; limit: number },
  checkedRows: number,
): Promise<Ranked[] | undefined> {
  const want = page.offset + page.limit;
  const params = new Params();
  const scoped = rowsInScope(scopeConditions(params, scope));
  const q = params.p(everyTerm(keywords.terms), 'tsquery');
  const sorted = params.p(checkedRows + want, 'int');
  const matched = params.p(want + MATCHED_ROWS, 'int');
  // The sort carries no words: each row's words are read again by key when it is checked. Each
  // offset 0 keeps its step apart (the sort below the check, the check done once per row), so the
  // limit stops the check. The row after the sorted ones (k > sorted, never checked) says that
  // some candidates were left out; without it and with fewer rows than the limit, every matching
  // row is in b and the page's passages need no reading.
  const { rows } = await db.query<{
    episode_id: string;
    start: number | null;
    rank: number | null;
    published_at: Date | null;
    mask: number | null;
    passages: boolean;
    passage_starts: number[] | null;
    passage_masks: number[] | null;
  }>(
    `with b as materialized (
       select b.episode_id, b.start, b.rank::float8 as rank, b.published_at, b.mask, b.k
         from (select b.*, case when b.k <= ${sorted} then
                            (select ${passageStarts('w.words', keywords.terms, true, params)}
                               from search_passage_rows w where w.episode_id = b.episode_id and w.start = b.start) end as mask
                 from (select b.*, row_number() over () as k
                         from (select w.episode_id, w.start, ts_rank('{1,1,1,1}', w.words, ${q}, 32) as rank, e.published_at
                                 from search_passage_rows w join catalog_episodes e on e.id = w.episode_id
                                ${whereOf([`w.words @@ ${q}`, ...scoped])}
                                order by rank desc, e.published_at desc, w.episode_id desc, w.start
                                limit ${sorted} + 1) b) b
               offset 0) b
        where b.mask <> 0 or b.k > ${sorted}
        limit ${matched}),
     page as (
       select episode_id from b where b.mask is not null group by episode_id
        order by min(b.k) offset ${params.p(page.offset, 'int')} limit ${params.p(page.limit, 'int')})
     select * from (
       select b.episode_id, b.start, b.rank, b.published_at, b.mask, false as passages, b.k,
              null::int[] as passage_starts, null::int[] as passage_masks
         from b
       union all
       select p.episode_id, null, null, null, null, true, null, p.starts, p.masks
         from (${pagePassages(params, keywords, 'page')}) p
        where exists (select from b where b.mask is null) or (select count(*) from b) >= ${matched}) r
      order by r.passages, r.k`,
    params.values,
  );
  const checked = rows.filter((row) => !row.passages);
  const every = checked.length < want + MATCHED_ROWS && checked.at(-1)?.mask !== null;
  const episodes = new Map<string, Ranked>();
  for (const row of checked) {
    if (row.mask === null) break;
    const hit = episodes.get(row.episode_id);
    if (hit === undefined)
      episodes.set(row.episode_id, {
        episode_id: row.episode_id,
        published_at: row.published_at!,
        score: row.rank!,
        bestRow: row.start!,
        masks: new Map([[row.start!, row.mask]]),
      });
    else hit.masks.set(row.start!, row.mask);
  }
  const met = [...episodes.values()];
  if (!every && met.length < want) return undefined;
  const shown = met.slice(page.offset, want);
  if (every) return shown;
  const read = new Map(rows.filter((row) => row.passages).map((row) => [row.episode_id, row]));
  return shown.map((hit) => {
    const found = read.get(hit.episode_id);
    return { ...hit, masks: masksOf(found?.passage_starts ?? null, found?.passage_masks ?? null) };
  });
}

/** Whether any episode matches: for the diagnostics of an empty page. */
export async function anyEpisode(db: Queryable, scope: EpisodeScope, keywords?: KeywordFilter) {
  return (await searchEpisodes(db, scope, keywords, 'recency', 1, 0)).length > 0;
}

/** Per-episode counts for timeseries: (bucket start, episodes, mentions). */
export interface BucketCount {
  bucket: Date;
  episodes: number;
  mentions: number;
}

export type Interval = 'day' | 'week' | 'month';

/**
 * Episodes and mentions per UTC bucket. Mentions: with keywords, the matching passages (rows of the
 * index whose lines overlap count once); else with an entity, its mentions as the matcher counts
 * them (the producer's when it sent any for the episode, else detected lines); else none.
 */
export async function countByBucket(
  db: Queryable,
  scope: EpisodeScope,
  keywords: KeywordFilter | undefined,
  interval: Interval,
): Promise<BucketCount[]> {
  const params = new Params();
  const unit = params.p(interval, 'text');
  let perEpisode: string;
  if (keywords !== undefined) {
    const where = scopeConditions(params, scope);
    // The scope narrows the rows before the exact step, as in searchEpisodes.
    const scoped = rowsInScope(where);
    // Matching passages that share lines count once: in each row, the starts with no matching start
    // in the PASSAGE_LINES - 1 before them, less one when the row's first one continues a group of
    // the row before (a start in that row's last PASSAGE_LINES - 1 at most PASSAGE_LINES - 1 back).
    const overlap = PASSAGE_LINES - 1;
    const before = Array.from({ length: overlap }, (_, k) => `(w.mask << ${k + 1})`).join(' | ');
    perEpisode = `select episode_id, published_at, sum(groups)::int as mentions
        from (select w.episode_id, e.published_at,
                     bit_count((w.mask & ~(${before}))::bit(${STRIDE}))::int
                     - case when lag(w.start) over ep = w.start - ${STRIDE}
                             and ((lag(w.mask) over ep >> ${STRIDE - overlap}) & ~((w.mask & -w.mask) - 1)) <> 0
                            then 1 else 0 end as groups
                from ${matchingRows(params, keywords, scoped)} w join catalog_episodes e on e.id = w.episode_id
               ${whereOf(where)}
              window ep as (partition by w.episode_id order by w.start)) runs
       group by episode_id, published_at`;
  } else if (scope.entity !== undefined) {
    // The episodes come from the mentions themselves (producer's, or detected from the index);
    // an entity that also counts where it only speaks keeps the scope's own entity condition.
    const { entity, ...rest } = scope;
    const where = scopeConditions(params, entity.speaking ? scope : rest);
    if (!entity.speaking && scope.role !== undefined)
      where.push(roleCondition(params, entity.id, scope.role));
    const id = params.p(entity.id, 'text');
    const names = entity.names;
    // Each mentioning line counted once: in the row of which it is an own line. offset 0: the lines
    // are counted in the scan, so the grouping never carries the tsvectors. The scope's other
    // filters narrow the rows before the names' lines are read (bound only when used: a name that
    // folds to no word detects nothing).
    const detected = names.length
      ? `select d.episode_id, sum(d.n)::int as n
           from (select w.episode_id, bit_count(${nameLines(params, 'w.words', names)}::bit(${STRIDE}))::int as n
                   from search_passage_rows w ${whereOf([`w.words @@ ${params.p(anyTerm(names), 'tsquery')}`, ...rowsInScope(scopeConditions(params, rest))])} offset 0) d
          group by d.episode_id`
      : 'select null::text as episode_id, 0 as n where false';
    const produced = `select episode_id, mention_count from search_mentions where entity_id = ${id}`;
    perEpisode = entity.speaking
      ? `select e.id as episode_id, e.published_at, coalesce(p.mention_count, d.n, 0) as mentions
           from catalog_episodes e
           left join (${produced}) p on p.episode_id = e.id
           left join (${detected}) d on d.episode_id = e.id
          ${whereOf(where)}`
      : `select e.id as episode_id, e.published_at, coalesce(p.mention_count, d.n, 0) as mentions
           from (${detected}) d full join (${produced}) p on p.episode_id = d.episode_id
           join catalog_episodes e on e.id = coalesce(p.episode_id, d.episode_id)
          ${whereOf(where)}`;
  } else {
    const where = scopeConditions(params, scope);
    perEpisode = `select e.id as episode_id, e.published_at, 0 as mentions
        from catalog_episodes e ${whereOf([...where, 'e.has_transcript'])}`;
  }
  const { rows } = await db.query<BucketCount>(
    `select date_trunc(${unit}, published_at at time zone 'UTC') at time zone 'UTC' as bucket,
            count(*)::int as episodes, coalesce(sum(mentions), 0)::int as mentions
       from (${perEpisode}) per_episode
      group by 1`,
    params.values,
  );
  return rows;
}

/** Keyset position of a mention page's last episode: newest first, then id descending. */
export interface MentionPosition {
  p: string;
  i: string;
}

/** Episodes examined by the first round of a mention list; each later round four times more. */
const FIRST_ROUND = 64;
const LAST_ROUND = 4096;

/** A mention list's episode as its keyset position: published_at to the microsecond (a Date keeps milliseconds). */
const POSITION = `e.id as i, ${exactInstant('e.published_at')} as p`;

/**
 * Episodes that mention the scope's entity, newest first, as keyset positions. Detection reads the index only for the
 * newest episodes of the scope, in rounds of growing size, so a page of a frequently mentioned
 * entity never reads all its mentions; past LAST_ROUND episodes the rest is read at once.
 */
export async function mentionEpisodes(
  db: Queryable,
  scope: EpisodeScope,
  limit: number,
  after?: MentionPosition,
): Promise<MentionPosition[]> {
  const found: MentionPosition[] = [];
  let position = after;
  for (let round = FIRST_ROUND; found.length < limit; round *= 4) {
    if (!scope.entity?.names.length || round > LAST_ROUND)
      return [...found, ...(await mentionPage(db, scope, limit - found.length, position))];
    // One statement a round: the round's episodes (the scope without the entity), then those of
    // them that mention it, and the round's last episode with how many it examined.
    const params = new Params();
    const where = scopeConditions(params, { ...scope, entity: undefined, role: undefined });
    if (position) where.push(keyset(params, position));
    const within = 'array(select id from examined)';
    const { rows } = await db.query<MentionPosition & { hit: boolean; examined: number }>(
      `with examined as materialized (
         select e.id, e.published_at from catalog_episodes e ${whereOf(where)}
          order by e.published_at desc, e.id desc limit ${params.p(round, 'int')})
       (select ${POSITION}, true as hit, 0 as examined from catalog_episodes e
         ${whereOf([`e.id = any(${within})`, ...scopeConditions(params, scope, within)])}
         order by e.published_at desc, e.id desc limit ${params.p(limit - found.length, 'int')})
       union all
       (select ${POSITION}, false, (select count(*)::int from examined) from examined e
         order by e.published_at, e.id limit 1)`,
      params.values,
    );
    const last = rows.find((row) => !row.hit);
    if (last === undefined) break;
    found.push(...rows.filter((row) => row.hit).map(({ i, p }) => ({ i, p })));
    if (last.examined < round) break;
    position = { i: last.i, p: last.p };
  }
  return found;
}

const keyset = (params: Params, after: MentionPosition) =>
  `(e.published_at, e.id) < (${params.p(after.p, 'timestamptz')}, ${params.p(after.i, 'text')})`;

/** One page of the scope's episodes after `after`, newest first, in one statement. */
async function mentionPage(db: Queryable, scope: EpisodeScope, limit: number, after?: MentionPosition) {
  const params = new Params();
  const where = scopeConditions(params, scope);
  if (after) where.push(keyset(params, after));
  const { rows } = await db.query<MentionPosition>(
    `select ${POSITION} from catalog_episodes e ${whereOf(where)}
      order by e.published_at desc, e.id desc limit ${params.p(limit, 'int')}`,
    params.values,
  );
  return rows;
}

export interface ProducedMentions {
  episode_id: string;
  mention_count: number;
  lines: number[];
  variants: string[];
}

/**
 * The entity's mentions in each episode, in one statement: the producer's (by episode) and, per
 * episode, the lines (positions) that hold any of the names, each row's own lines (detected).
 */
export async function entityLines(
  db: Queryable,
  entity: { id: string; names: readonly Term[] },
  episodeIds: readonly string[],
): Promise<{ produced: Map<string, ProducedMentions>; detected: Map<string, number[]> }> {
  const produced = new Map<string, ProducedMentions>();
  const detected = new Map<string, number[]>();
  if (episodeIds.length === 0) return { produced, detected };
  const params = new Params();
  const ids = params.p(episodeIds, 'text[]');
  const producedRows = `select false as detected, episode_id, mention_count, lines, variants, null::int as start, null::int as found
                          from search_mentions where entity_id = ${params.p(entity.id, 'text')} and episode_id = any(${ids})`;
  const detectedRows = entity.names.length
    ? `union all
       select true, w.episode_id, null, null, null, w.start, ${nameLines(params, 'w.words', entity.names)}
         from search_passage_rows w
        where w.episode_id = any(${ids}) and w.words @@ ${params.p(anyTerm(entity.names), 'tsquery')}`
    : '';
  const { rows } = await db.query<ProducedMentions & { detected: boolean; start: number; found: number }>(
    `select * from (${producedRows} ${detectedRows}) m order by m.detected, m.episode_id, m.start`,
    params.values,
  );
  for (const { detected: isDetected, start, found, ...row } of rows) {
    if (!isDetected) {
      produced.set(row.episode_id, row);
      continue;
    }
    const lines = detected.get(row.episode_id) ?? [];
    detected.set(row.episode_id, lines);
    lines.push(...startsOf(start, found));
  }
  return { produced, detected };
}
