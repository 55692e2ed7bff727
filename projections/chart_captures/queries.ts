import type { Queryable } from '../../src/db/db.ts';
import type { ChartCategory, ChartEntry, ChartSource } from '../../src/ingestion/ranking-captured.ts';

/** One chart entry of one capture, with what is computed when read. */
export interface RankingRow {
  chart_key: string;
  source: ChartSource;
  chart_type: string;
  country: string;
  category: ChartCategory | null;
  captured_at: Date;
  rank: number;
  /** What follows the show across captures: `p:` and the podcast it belongs to, else `x:` and its external id. */
  show_key: string;
  /** The show the entry belongs to (ENTRY_PODCAST_ID); null when none is known. */
  podcast_id: string | null;
  entry: ChartEntry;
  chart_total: number;
  /** The show's rank in the chart's capture just before this one; null when it was not in it. */
  previous_rank: number | null;
  /** This capture is the chart's latest. */
  is_current: boolean;
}

/** The most popular show with that Apple id, as a podcast {id} given as an Apple id resolves. */
const appleOwner = (appleId: string) =>
  `(select o.id from podcasts o where o.apple_id = ${appleId} order by o.popularity desc nulls last, o.id limit 1)`;

/** The Apple id whose entries without a podcast id belong to the show `podcastId` (null if none). */
const appleIdOf = (podcastId: string) =>
  `(select a.apple_id from podcasts a where a.id = ${podcastId} and a.id = ${appleOwner('a.apple_id')})`;

/**
 * The show an entry of chart_entries `e` on chart `c` belongs to: the podcast id it names, else,
 * on an Apple chart, the show whose Apple id (`directory_ids.apple`) its external id is. Resolved
 * when read, so a show upserted after the capture claims it, and a rebuild answers the same.
 */
const ENTRY_PODCAST_ID = `coalesce(e.podcast_id, case when c.source = 'apple' then ${appleOwner('e.external_id')} end)`;

/** The entry `e` on chart `c` belongs to the podcast $1 (ENTRY_PODCAST_ID). */
const ENTRY_OF_PODCAST = `(e.podcast_id = $1::text
  or (e.podcast_id is null and c.source = 'apple' and e.external_id = ${appleIdOf('$1::text')}))`;

/** Selects RankingRow columns from chart_entries `e` joined with charts `c` and RANKING_JOINS. */
const RANKING_COLUMNS = `
  e.chart_key, c.source, c.chart_type, c.country, c.category, e.captured_at, e.rank,
  coalesce('p:' || own.podcast_id, e.show_key) as show_key, own.podcast_id, e.entry,
  cap.entry_count as chart_total, prev.rank as previous_rank, e.captured_at = c.latest_captured_at as is_current`;

/**
 * The previous capture's entry of the same show: stored under the same key, or, for a show known,
 * under its podcast id or (on an Apple chart) its Apple id: a producer that learns a show's podcast
 * id between two captures does not make it new. `own` is the entry's show, resolved once a row
 * (`offset 0` keeps the planner from copying it into each use).
 */
const RANKING_JOINS = `
  join chart_captures cap on cap.chart_key = e.chart_key and cap.captured_at = e.captured_at
  cross join lateral (select ${ENTRY_PODCAST_ID} as podcast_id offset 0) own
  left join lateral (
    select p.rank from chart_entries p
     where p.chart_key = e.chart_key
       and p.show_key = any(array[e.show_key, 'p:' || own.podcast_id,
                                  case when c.source = 'apple' and e.podcast_id is not null
                                       then 'x:' || ${appleIdOf('e.podcast_id')} end])
       and p.captured_at = (select max(pc.captured_at) from chart_captures pc
                             where pc.chart_key = e.chart_key and pc.captured_at < e.captured_at)
     limit 1
  ) prev on true`;

/** A show's best rank as stored: its entry of the best rank in the charts' latest captures. */
export interface BestRankRow {
  captured_at: string;
  chart_type: string;
  rank: number;
  source: ChartSource;
  /** '' for a chart without a category. */
  category_slug: string;
  country: string;
}

/**
 * SQL: the best rank of the show `podcastId` names as JSON (BestRankRow; null when it is on no
 * chart's latest capture): the first of its live appearances (currentRankingsOfPodcast), the
 * least rank, then the least chart key (docs/catalog-rankings.md, "best_rank").
 */
export const bestRankOf = (podcastId: string) =>
  `(select json_build_object('captured_at', b.captured_at, 'chart_type', c.chart_type, 'rank', b.rank,
                             'source', c.source, 'category_slug', c.category_slug, 'country', c.country)
      from (select e.rank, e.chart_key, e.captured_at from chart_entries e
             where e.latest and e.podcast_id = ${podcastId}
            union all
            select e.rank, e.chart_key, e.captured_at
              from chart_entries e join charts a on a.chart_key = e.chart_key and a.source = 'apple'
             where e.latest and e.podcast_id is null and e.external_id = ${appleIdOf(podcastId)}) b
      join charts c on c.chart_key = b.chart_key
     order by b.rank, b.chart_key
     limit 1)`;

/** A podcast id known to the ranking data: an entry's podcast id, or the podcast id of an Apple entry's directory id. */
export async function podcastIdInRankings(db: Queryable, idOrAppleId: string): Promise<string | null> {
  const { rows } = await db.query<{ podcast_id: string }>(
    `(select podcast_id from chart_entries where podcast_id = $1::text limit 1)
     union all
     (select e.podcast_id from chart_entries e join charts c using (chart_key)
       where e.external_id = $1::text and c.source = 'apple' and e.podcast_id is not null
       order by e.captured_at desc limit 1)
     limit 1`,
    [idOrAppleId],
  );
  return rows[0]?.podcast_id ?? null;
}

export interface RankPosition {
  rank: number;
  chart_key: string;
}

/** The podcast's entries in each chart's latest capture, best rank first. */
export async function currentRankingsOfPodcast(
  db: Queryable,
  podcastId: string,
  page: { limit: number | null; after: RankPosition | null },
): Promise<RankingRow[]> {
  const { rows } = await db.query<RankingRow>(
    `select ${RANKING_COLUMNS}
       from chart_entries e
       join charts c on c.chart_key = e.chart_key and c.latest_captured_at = e.captured_at
       ${RANKING_JOINS}
      where ${ENTRY_OF_PODCAST}
        and ($2::int is null or (e.rank, e.chart_key) > ($2::int, $3::text))
      order by e.rank, e.chart_key
      limit $4::int`,
    [podcastId, page.after?.rank ?? null, page.after?.chart_key ?? null, page.limit],
  );
  return rows;
}

export interface ChartSelector {
  source: string;
  chart_type: string;
  country: string;
  /** '' for the chart without a category. */
  category_slug: string;
}

export interface ChartRow {
  chart_key: string;
  latest_captured_at: Date;
}

export async function findChart(db: Queryable, chart: ChartSelector): Promise<ChartRow | null> {
  const { rows } = await db.query<ChartRow>(
    `select chart_key, latest_captured_at from charts
      where source = $1::text and chart_type = $2::text and country = $3::text and category_slug = $4::text`,
    [chart.source, chart.chart_type, chart.country, chart.category_slug],
  );
  return rows[0] ?? null;
}

/** Entries of one capture of a chart, by rank, within [minRank, maxRank], after `afterRank`. */
export async function captureEntries(
  db: Queryable,
  input: {
    chartKey: string;
    capturedAt: Date;
    minRank: number;
    maxRank: number;
    afterRank: number | null;
    limit: number | null;
  },
): Promise<RankingRow[]> {
  const { rows } = await db.query<RankingRow>(
    `select ${RANKING_COLUMNS}
       from chart_entries e
       join charts c on c.chart_key = e.chart_key
       ${RANKING_JOINS}
      where e.chart_key = $1::text and e.captured_at = $2::timestamptz
        and e.rank between $3::int and $4::int and ($5::int is null or e.rank > $5::int)
      order by e.rank
      limit $6::int`,
    [input.chartKey, input.capturedAt, input.minRank, input.maxRank, input.afterRank, input.limit],
  );
  return rows;
}

/**
 * The capture a chart's latest one is compared with for movers: its latest capture at least
 * `windowDays` older than the latest, else its earliest.
 */
export async function baselineCapture(
  db: Queryable,
  chartKey: string,
  latest: Date,
  windowDays: number,
): Promise<Date> {
  const { rows } = await db.query<{ at: Date }>(
    `select coalesce(
       (select max(captured_at) from chart_captures
         where chart_key = $1::text and captured_at <= $2::timestamptz - make_interval(days => $3::int)),
       (select min(captured_at) from chart_captures where chart_key = $1::text)) as at`,
    [chartKey, latest, windowDays],
  );
  return rows[0]!.at;
}

export interface HistoryFilter {
  podcastId: string;
  source: string | null;
  country: string | null;
  categorySlug: string | null;
  since: string | null;
  until: string | null;
}

export interface HistoryPosition {
  captured_at: string;
  chart_key: string;
}

/** Every entry of the podcast in every capture, oldest first. */
export async function rankingHistory(
  db: Queryable,
  filter: HistoryFilter,
  page: { limit: number | null; after: HistoryPosition | null },
): Promise<RankingRow[]> {
  const { rows } = await db.query<RankingRow>(
    `select ${RANKING_COLUMNS}
       from chart_entries e
       join charts c on c.chart_key = e.chart_key
       ${RANKING_JOINS}
      where ${ENTRY_OF_PODCAST}
        and ($2::text is null or c.source = $2::text)
        and ($3::text is null or c.country = $3::text)
        and ($4::text is null or c.category_slug = $4::text)
        and ($5::timestamptz is null or e.captured_at >= $5::timestamptz)
        and ($6::timestamptz is null or e.captured_at < $6::timestamptz)
        and ($7::timestamptz is null or (e.captured_at, e.chart_key) > ($7::timestamptz, $8::text))
      order by e.captured_at, e.chart_key
      limit $9::int`,
    [
      filter.podcastId,
      filter.source,
      filter.country,
      filter.categorySlug,
      filter.since,
      filter.until,
      page.after?.captured_at ?? null,
      page.after?.chart_key ?? null,
      page.limit,
    ],
  );
  return rows;
}
