import type { Queryable } from '../../src/db/db.ts';
import { SPONSOR_KEY } from './queries.ts';

export type Interval = 'day' | 'week' | 'month';

export interface AdSeriesScope {
  sponsorKeys?: readonly string[] | undefined;
  companyId?: string | undefined;
  podcastIds?: readonly string[] | undefined;
  since?: Date | undefined;
  until: Date;
}

export interface SeriesRow {
  bucket: string;
  count: number;
  host_read_count: number;
  pre_recorded_count: number;
}

const where = `not is_network_promo
  and ($1::text[] is null or ${SPONSOR_KEY} = any($1::text[]))
  and ($2::text is null or sponsor_company_id = $2::text)
  and ($3::text[] is null or podcast_id = any($3::text[]))
  and ($4::timestamptz is null or published_at >= $4::timestamptz)
  and published_at < $5::timestamptz`;

const args = (s: AdSeriesScope) => [
  s.sponsorKeys ?? null,
  s.companyId ?? null,
  s.podcastIds ?? null,
  s.since ?? null,
  s.until,
];

/** Ad counts per UTC bucket (weeks from Monday) with the read-type split; empty buckets absent. */
export async function adSeries(db: Queryable, scope: AdSeriesScope, interval: Interval) {
  const { rows } = await db.query<SeriesRow>(
    `select to_char(date_trunc('${interval}', published_at at time zone 'UTC'), 'YYYY-MM-DD') as bucket,
            count(*)::int as count,
            (count(*) filter (where read_type = 'HOST_READ'))::int as host_read_count,
            (count(*) filter (where read_type = 'PRE_RECORDED'))::int as pre_recorded_count
       from ads where ${where} group by 1 order by 1`,
    args(scope),
  );
  return rows;
}

/** Distinct episodes and shows, and the first ad, over the same scope. */
export async function adSeriesTotals(db: Queryable, scope: AdSeriesScope) {
  const { rows } = await db.query<{ episodes: number; podcasts: number; first_at: Date | null }>(
    `select count(distinct episode_id)::int as episodes, count(distinct podcast_id)::int as podcasts,
            min(published_at) as first_at
       from ads where ${where}`,
    args(scope),
  );
  return rows[0]!;
}
