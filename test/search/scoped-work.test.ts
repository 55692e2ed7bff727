import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countByBucket } from '../../projections/search-passages/queries.ts';
import { episodeEvent } from '../fixtures/events.ts';
import { rowsRead } from '../support/rows-read.ts';
import { type SearchHarness, searchHarness } from './support.ts';

// A timeseries scoped to one episode reads the index rows of that episode only, not every row of
// every episode holding the word or name (docs/search.md, "Index design": no query scans
// all lines).
const EPISODES = 12;

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
    const { returned: scanned, answer: counts } = await rowsRead(h.db, 'search_passage_rows', (db) =>
      countByBucket(db, { episodeId: 'ep-3' }, { terms: [['wombat']], all: true }, 'month'),
    );
    expect(counts).toEqual([{ bucket: new Date('2026-10-01T00:00:00Z'), episodes: 1, mentions: 1 }]);
    // ep-3 has 3 rows (starts 0, 20, 40); the other episodes' 33 rows are never read.
    expect(Math.max(...scanned)).toBeLessThanOrEqual(3);
  });

  it('reads only the scoped episode’s rows to detect an entity’s mentions', async () => {
    const entity = { id: 'ent-wombat', names: [['wombat']], speaking: false };
    const { returned: scanned, answer: counts } = await rowsRead(h.db, 'search_passage_rows', (db) =>
      countByBucket(db, { episodeId: 'ep-3', entity }, undefined, 'month'),
    );
    expect(counts).toEqual([{ bucket: new Date('2026-10-01T00:00:00Z'), episodes: 1, mentions: 60 }]);
    expect(Math.max(...scanned)).toBeLessThanOrEqual(3);
  });
});
