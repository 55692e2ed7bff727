import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bestRankOf } from '../../projections/chart_captures/queries.ts';
import type { Db } from '../../src/db/db.ts';
import { createTestDb } from '../support/db.ts';

// Valid podcast.upserted events may give thousands of shows one Apple id; the show it names (the
// most popular, then the least id) is read from the index, not by sorting them all, on every
// podcast reference's best_rank (docs/catalog-rankings.md, "Which show an entry belongs to").

let db: Db;
let drop: () => Promise<void>;
beforeAll(async () => {
  ({ db, drop } = await createTestDb());
  // Written straight into the read model; the show list's triggers are not what is measured.
  await db.query('alter table podcasts disable trigger user');
  await db.query(
    `insert into podcasts (id, title, search_title, field_times, apple_id, popularity)
     select 'shared-' || lpad(i::text, 4, '0'), 't', 't', '{}'::jsonb, '1000',
            case when i % 7 = 0 then null else (i % 50) / 100.0 end
       from generate_series(1, 2000) i
     union all
     select 'other-' || i, 't', 't', '{}'::jsonb, (2000 + i)::text, 0.5 + (i % 50) / 100.0
       from generate_series(1, 20000) i`,
  );
  await db.query('alter table podcasts enable trigger user');
  await db.query(`insert into charts values ('apple/top/us/', 'apple', 'top', 'us', '', null, '2026-11-01')`);
  await db.query(`insert into chart_captures values ('apple/top/us/', '2026-11-01', '2026-11-01', 1)`);
  await db.query(
    `insert into chart_entries (chart_key, captured_at, rank, show_key, podcast_id, external_id, entry, latest)
     values ('apple/top/us/', '2026-11-01', 3, 'x:1000', null, '1000', '{}', true)`,
  );
  await db.query('analyze podcasts, charts, chart_captures, chart_entries');
});
afterAll(() => drop());

const bestRank = async (id: string) =>
  (await db.query<{ b: { rank: number } | null }>(`select ${bestRankOf('$1::text')} as b`, [id])).rows[0]!.b;

/** Rows the statement read from podcasts, over every loop of every node scanning it. */
async function podcastRowsRead(id: string) {
  const { rows } = await db.query<{ 'QUERY PLAN': unknown }>(
    `explain (analyze, format json) select ${bestRankOf('$1::text')}`,
    [id],
  );
  interface Node {
    'Relation Name'?: string;
    'Actual Rows': number;
    'Actual Loops': number;
    Plans?: Node[];
  }
  const plan = (rows[0]!['QUERY PLAN'] as { Plan: Node }[])[0]!.Plan;
  const walk = (n: Node): number =>
    (n['Relation Name'] === 'podcasts' ? n['Actual Rows'] * n['Actual Loops'] : 0) +
    (n.Plans ?? []).reduce((sum, p) => sum + walk(p), 0);
  return walk(plan);
}

describe('the show an Apple id names, among 2,000 sharing it', () => {
  it('is the most popular, then the least id: its best rank is the entry, the others have none', async () => {
    // popularity 0.49 for i % 50 = 49 (i = 49, 99, …), not a multiple of 7: 49 is, so 99 wins.
    expect(await bestRank('shared-0099')).toMatchObject({ rank: 3 });
    expect(await bestRank('shared-0149')).toBeNull();
    expect(await bestRank('shared-0049')).toBeNull();
  });

  it('is found reading a few rows of podcasts, not every show sharing the id', async () => {
    expect(await podcastRowsRead('shared-0149')).toBeLessThanOrEqual(5);
    expect(await podcastRowsRead('shared-0099')).toBeLessThanOrEqual(5);
  });
});
