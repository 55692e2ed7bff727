import type { Queryable } from '../../src/db/db.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import { type ChartEntry, chartKey, type RankingCaptured } from '../../src/ingestion/ranking-captured.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';

/** What identifies a show across captures of one chart: its podcast id, else its directory id. */
export const showKey = (entry: ChartEntry) =>
  entry.podcast_id !== undefined ? `p:${entry.podcast_id}` : `x:${entry.external_id}`;

/**
 * The chart captures read model: every capture whole, one row per entry. A capture re-sent for the
 * same chart and captured_at replaces the stored one unless it is older (occurred_at).
 */
export const chartCapturesProjection: Projection = {
  name: 'chart_captures',
  eventTypes: ['RankingCaptured'],
  async apply(tx: Queryable, events: readonly RecordedEvent[]) {
    const latest = new Map<string, RankingCaptured & { key: string; at: string }>();
    for (const event of events) {
      const data = event.data as RankingCaptured;
      const key = chartKey(data.chart);
      const at = new Date(data.captured_at).toISOString();
      const id = `${key}@${at}`;
      const seen = latest.get(id);
      if (!seen || Date.parse(seen.occurred_at) <= Date.parse(data.occurred_at))
        latest.set(id, { ...data, key, at });
    }
    for (const capture of latest.values()) await storeCapture(tx, capture);
  },
  async reset(tx: Queryable) {
    await tx.query('delete from charts');
  },
};

async function storeCapture(tx: Queryable, capture: RankingCaptured & { key: string; at: string }) {
  const { chart } = capture;
  await tx.query(
    `insert into charts (chart_key, source, chart_type, country, category_slug, category, latest_captured_at)
     values ($1::text, $2::text, $3::text, $4::text, $5::text, $6::jsonb, $7::timestamptz)
     on conflict (chart_key) do update set
       category = case when excluded.latest_captured_at >= charts.latest_captured_at
                       then excluded.category else charts.category end,
       latest_captured_at = greatest(charts.latest_captured_at, excluded.latest_captured_at)`,
    [
      capture.key,
      chart.source,
      chart.chart_type,
      chart.country,
      chart.category?.slug ?? '',
      chart.category ? JSON.stringify(chart.category) : null,
      capture.at,
    ],
  );
  const { rows } = await tx.query<{ replaced: boolean }>(
    `with old as (
       delete from chart_captures
        where chart_key = $1::text and captured_at = $2::timestamptz and occurred_at <= $3::timestamptz
        returning 1
     ), kept as (
       select 1 from chart_captures
        where chart_key = $1::text and captured_at = $2::timestamptz and occurred_at > $3::timestamptz
     )
     select not exists (select 1 from kept) as replaced`,
    [capture.key, capture.at, capture.occurred_at],
  );
  if (!rows[0]?.replaced) return;
  await tx.query(
    `insert into chart_captures (chart_key, captured_at, occurred_at, entry_count)
     values ($1::text, $2::timestamptz, $3::timestamptz, $4::int)`,
    [capture.key, capture.at, capture.occurred_at, capture.entries.length],
  );
  await tx.query(
    `insert into chart_entries (chart_key, captured_at, rank, show_key, podcast_id, external_id, entry)
     select $1::text, $2::timestamptz, r.rank, r.show_key, r.podcast_id, r.external_id, r.entry
       from jsonb_to_recordset($3::jsonb) as r(rank int, show_key text, podcast_id text, external_id text, entry jsonb)`,
    [
      capture.key,
      capture.at,
      JSON.stringify(
        capture.entries.map((entry) => ({
          rank: entry.rank,
          show_key: showKey(entry),
          podcast_id: entry.podcast_id ?? null,
          external_id: entry.external_id,
          entry,
        })),
      ),
    ],
  );
  // The chart's latest capture may have changed (or been stored again): its entries alone are marked.
  await tx.query(
    `update chart_entries e set latest = (e.captured_at = c.latest_captured_at)
       from charts c
      where c.chart_key = $1::text and e.chart_key = $1::text
        and (e.latest or e.captured_at = c.latest_captured_at)
        and e.latest <> (e.captured_at = c.latest_captured_at)`,
    [capture.key],
  );
}
