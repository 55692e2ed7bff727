import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countByBucket } from '../../projections/search-passages/queries.ts';
import type { Queryable } from '../../src/db/db.ts';
import { episodeEvent } from '../fixtures/events.ts';
import { type SearchHarness, searchHarness } from './support.ts';

// A timeseries scoped to one episode reads the index rows of that episode only, not every row of
// every episode holding the word or name (docs/search.md, "Index design": no query scans
// all lines).
const EPISODES = 12;

/** The rows each scan of search_passage_rows returned while running `run`'s queries. */
async function scannedRows(db: Queryable, run: (db: Queryable) => Promise<unknown>) {
  const scanned: number[] = [];
  const explaining: Queryable = {
    async query(text: string, params?: readonly unknown[]) {
      const { rows } = await db.query<{ 'QUERY PLAN': unknown }>(
        `explain (analyze, format json) ${text}`,
        params,
      );
      const visit = (node: Record<string, unknown>) => {
        if (node['Relation Name'] === 'search_passage_rows')
          scanned.push((node['Actual Rows'] as number) * (node['Actual Loops'] as number));
        for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) visit(child);
      };
      const plan = rows[0]!['QUERY PLAN'];
      visit((typeof plan === 'string' ? JSON.parse(plan) : plan)[0].Plan);
      return db.query(text, params);
    },
  } as Queryable;
  await run(explaining);
  return scanned;
}

describe('timeseries work', () => {
  let h: SearchHarness;
  beforeAll(async () => {
    h = await searchHarness('postgres');
    await h.ingest(
      Array.from({ length: EPISODES }, (_, i) =>
        episodeEvent({
          id: `ep-${i}`,
          publishedAt: '2026-10-05T08:00:00Z',
          lines: Array.from({ length: 60 }, (_, k) => `wombat line ${k}`),
        }),
      ),
    );
  });
  afterAll(() => h?.close());

  it('reads only the scoped episode’s rows for the exact step', async () => {
    let counts: unknown;
    const scanned = await scannedRows(h.db, async (db) => {
      counts = await countByBucket(db, { episodeId: 'ep-3' }, { terms: [['wombat']], all: true }, 'month');
    });
    expect(counts).toEqual([{ bucket: new Date('2026-10-01T00:00:00Z'), episodes: 1, mentions: 1 }]);
    // ep-3 has 3 rows (starts 0, 20, 40); the other episodes' 33 rows are never read.
    expect(Math.max(...scanned)).toBeLessThanOrEqual(3);
  });

  it('reads only the scoped episode’s rows to detect an entity’s mentions', async () => {
    let counts: unknown;
    const entity = { id: 'ent-wombat', names: [['wombat']], speaking: false };
    const scanned = await scannedRows(h.db, async (db) => {
      counts = await countByBucket(db, { episodeId: 'ep-3', entity }, undefined, 'month');
    });
    expect(counts).toEqual([{ bucket: new Date('2026-10-01T00:00:00Z'), episodes: 1, mentions: 60 }]);
    expect(Math.max(...scanned)).toBeLessThanOrEqual(3);
  });
});
