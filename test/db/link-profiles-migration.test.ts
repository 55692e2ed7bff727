import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linksOfPodcasts } from '../../projections/podcast-links/queries.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { migrateWhileBatchHolds } from '../support/migration-in-use.ts';

describe('migration 0267 (podcast_links_top) on a database in use', () => {
  let test: TestDb;

  beforeAll(async () => {
    test = await createTestDb({ migratedBefore: 267 });
    await test.db.query(
      `insert into podcast_links (podcast_id, kind, key, label, episode_count, last_at)
       values ('pod-1', 'guest', 'g1', 'Guest One', 2, '2026-11-01T00:00:00Z'),
              ('pod-1', 'guest', 'g2', 'Guest Two', 5, '2026-11-01T00:00:00Z')`,
    );
  });
  afterAll(async () => {
    await test.drop();
  });

  it("leaves a show's links readable while the index is built (here: waiting for a links batch)", async () => {
    const applied = await migrateWhileBatchHolds(test, 267, 'podcast_links', async (reader) => {
      const links = await linksOfPodcasts(reader, ['pod-1'], ['guest']);
      expect(links.map((l) => [l.key, l.episode_count])).toEqual([
        ['g2', 5],
        ['g1', 2],
      ]);
    });
    expect(applied).toEqual(['0267_link_profiles']);
    const { rows } = await test.db.query<{ name: string; def: string }>(
      `select indexname as name, indexdef as def from pg_indexes
        where schemaname = current_schema() and tablename = 'podcast_links' order by 1`,
    );
    expect(rows.map((r) => r.name)).toEqual(['podcast_links_key', 'podcast_links_pkey', 'podcast_links_top']);
    expect(rows[2]!.def).toMatch(/\(podcast_id, kind, episode_count DESC, key\)$/);
  });
});
