import type { Queryable } from '../../src/db/db.ts';

export const METRICS = ['ad_count', 'podcast_reach', 'episode_reach'] as const;
export type Metric = (typeof METRICS)[number];

/** One sponsor's counts over a window (network promos excluded). */
export interface SponsorCounts {
  sponsor_key: string;
  ad_count: number;
  podcast_reach: number;
  episode_reach: number;
  first_seen_at: Date;
  last_seen_at: Date;
}

export interface AdScope {
  since?: Date | undefined;
  until?: Date | undefined;
  companyId?: string | undefined;
  podcastIds?: readonly string[] | undefined;
}

/** The sql key of a sponsor: its id, else its name (docs/advertising.md, "Sponsors"). */
export const SPONSOR_KEY = 'coalesce(sponsor_id, sponsor_name)';

/**
 * Every sponsor's counts over a scope, from the integer-keyed facts in one sorted aggregate: a fact
 * is one (episode, sponsor), so its rows count episodes and its distinct shows count reach.
 */
export async function sponsorCounts(db: Queryable, scope: AdScope): Promise<SponsorCounts[]> {
  const { rows } = await db.query<SponsorCounts>(
    `with per_sponsor as (
       select sponsor_no, sum(ads)::int as ad_count, count(distinct podcast_no)::int as podcast_reach,
              count(*)::int as episode_reach, min(published_at) as first_seen_at, max(published_at) as last_seen_at
         from ad_facts
        where ($1::timestamptz is null or published_at >= $1::timestamptz)
          and ($2::timestamptz is null or published_at < $2::timestamptz)
          and ($3::text is null or company_id = $3::text)
          and ($4::text[] is null
               or podcast_no = any(array(select no from ad_keys where kind = 'podcast' and key = any($4::text[]))))
        group by sponsor_no
     )
     select k.key as sponsor_key, s.ad_count, s.podcast_reach, s.episode_reach, s.first_seen_at, s.last_seen_at
       from per_sponsor s join ad_keys k on k.no = s.sponsor_no`,
    [scope.since ?? null, scope.until ?? null, scope.companyId ?? null, scope.podcastIds ?? null],
  );
  return rows;
}

/** Deterministic order: the metric, then the other counts, then the sponsor key. */
export function rankSponsors(rows: SponsorCounts[], metric: Metric): SponsorCounts[] {
  const others = METRICS.filter((m) => m !== metric);
  return [...rows].sort(
    (a, b) =>
      b[metric] - a[metric] ||
      b[others[0]!] - a[others[0]!] ||
      b[others[1]!] - a[others[1]!] ||
      (a.sponsor_key < b.sponsor_key ? -1 : a.sponsor_key > b.sponsor_key ? 1 : 0),
  );
}

export interface SponsorInfo {
  sponsor_key: string;
  name: string;
  company_id: string | null;
}

/** Each sponsor's name and company as its latest ad gives them. */
export async function sponsorInfo(db: Queryable, keys: readonly string[]): Promise<Map<string, SponsorInfo>> {
  if (keys.length === 0) return new Map();
  const { rows } = await db.query<SponsorInfo>(
    `select k.key as sponsor_key, latest.sponsor_name as name,
            (select a.sponsor_company_id from ads a
              where ${SPONSOR_KEY.replace(/sponsor_/g, 'a.sponsor_')} = k.key and not a.is_network_promo
                and a.sponsor_company_id is not null
              order by a.published_at desc limit 1) as company_id
       from unnest($1::text[]) as k(key)
       cross join lateral (
         select a.sponsor_name from ads a
          where ${SPONSOR_KEY.replace(/sponsor_/g, 'a.sponsor_')} = k.key and not a.is_network_promo
          order by a.published_at desc, a.id limit 1) latest`,
    [keys],
  );
  return new Map(rows.map((row) => [row.sponsor_key, row]));
}

export type WindowName = 'all_time' | 'trailing_7d' | 'ending_30d_ago';

export interface Snapshot {
  window_name: WindowName;
  since: Date | null;
  until: Date | null;
  refreshed_at: Date;
  sponsor_count: number;
}

export async function snapshotOf(db: Queryable, name: WindowName): Promise<Snapshot | null> {
  const { rows } = await db.query<Snapshot>(
    'select * from ad_leaderboard_snapshots where window_name = $1::text',
    [name],
  );
  return rows[0] ?? null;
}

/** A page of a snapshot: the rows ranked after `afterRank` by the metric, at most `limit`. */
export async function snapshotPage(
  db: Queryable,
  name: WindowName,
  metric: Metric,
  afterRank: number,
  limit: number,
): Promise<(SponsorCounts & { rank: number; info: SponsorInfo })[]> {
  const { rows } = await db.query<SponsorCounts & { rank: number; name: string; company_id: string | null }>(
    `select sponsor_key, name, company_id, ad_count, podcast_reach, episode_reach, first_seen_at, last_seen_at,
            rank_${metric} as rank
       from ad_leaderboard_rows where window_name = $1::text and rank_${metric} > $2::int
      order by rank_${metric} limit $3::int`,
    [name, afterRank, limit],
  );
  return rows.map(({ name: sponsorName, company_id, ...row }) => ({
    ...row,
    info: { sponsor_key: row.sponsor_key, name: sponsorName, company_id },
  }));
}

/** Replaces one window's snapshot with freshly counted, ranked rows, in the caller's transaction. */
export async function writeSnapshot(
  tx: Queryable,
  name: WindowName,
  bounds: { since: Date | null; until: Date | null },
  rows: SponsorCounts[],
  info: ReadonlyMap<string, SponsorInfo>,
  refreshedAt: Date,
) {
  const ranks = Object.fromEntries(
    METRICS.map((m) => [m, new Map(rankSponsors(rows, m).map((r, i) => [r.sponsor_key, i + 1]))]),
  ) as Record<Metric, Map<string, number>>;
  await tx.query('delete from ad_leaderboard_rows where window_name = $1::text', [name]);
  for (let i = 0; i < rows.length; i += 5000) {
    const chunk = rows.slice(i, i + 5000);
    await tx.query(
      `insert into ad_leaderboard_rows (window_name, sponsor_key, name, company_id, ad_count, podcast_reach,
              episode_reach, first_seen_at, last_seen_at, rank_ad_count, rank_podcast_reach, rank_episode_reach)
       select $1::text, r.k, r.n, r.c, r.a, r.p, r.e, r.f, r.l, r.ra, r.rp, r.re
         from jsonb_to_recordset($2::jsonb) as r(k text, n text, c text, a int, p int, e int, f timestamptz,
              l timestamptz, ra int, rp int, re int)`,
      [
        name,
        JSON.stringify(
          chunk.map((r) => ({
            k: r.sponsor_key,
            n: info.get(r.sponsor_key)?.name ?? r.sponsor_key,
            c: info.get(r.sponsor_key)?.company_id ?? null,
            a: r.ad_count,
            p: r.podcast_reach,
            e: r.episode_reach,
            f: r.first_seen_at,
            l: r.last_seen_at,
            ra: ranks.ad_count.get(r.sponsor_key),
            rp: ranks.podcast_reach.get(r.sponsor_key),
            re: ranks.episode_reach.get(r.sponsor_key),
          })),
        ),
      ],
    );
  }
  await tx.query(
    `insert into ad_leaderboard_snapshots (window_name, since, until, refreshed_at, sponsor_count)
     values ($1::text, $2::timestamptz, $3::timestamptz, $4::timestamptz, $5::int)
     on conflict (window_name) do update set since = excluded.since, until = excluded.until,
            refreshed_at = excluded.refreshed_at, sponsor_count = excluded.sponsor_count`,
    [name, bounds.since, bounds.until, refreshedAt, rows.length],
  );
}
