import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from '../support/db.ts';
import { migrateWhileBatchHolds } from '../support/migration-in-use.ts';

describe('migration 0161 (ads_sponsor_key covering) on a database in use', () => {
  let test: TestDb;

  beforeAll(async () => {
    test = await createTestDb({ migratedBefore: 161 });
    await test.db.query(
      `insert into ads (id, episode_id, podcast_id, published_at, sponsor_id, sponsor_name, read_type, is_network_promo)
       values ('ad-1', 'ep-1', 'pod-1', '2026-11-01T00:00:00Z', 's1', 'Sponsor One', 'HOST_READ', false)`,
    );
  });
  afterAll(async () => {
    await test.drop();
  });

  it('leaves ads readable while the index is built (here: waiting for an ads batch)', async () => {
    const applied = await migrateWhileBatchHolds(test, 161, 'ads', async (reader) => {
      const { rows } = await reader.query<{ n: number }>(
        `select count(*)::int as n from ads where coalesce(sponsor_id, sponsor_name) = 's1' and not is_network_promo`,
      );
      expect(rows).toEqual([{ n: 1 }]);
    });
    expect(applied).toEqual(['0161_ads_sponsor_key_covering']);
    const { rows } = await test.db.query<{ def: string }>(
      "select indexdef as def from pg_indexes where schemaname = current_schema() and tablename = 'ads' and indexname like 'ads_sponsor_key%'",
    );
    expect(rows.map((r) => r.def)).toEqual([
      expect.stringMatching(
        /^CREATE INDEX ads_sponsor_key ON .*ads USING btree \(COALESCE\(sponsor_id, sponsor_name\), published_at\) INCLUDE \(podcast_id, episode_id, read_type, sponsor_id, sponsor_name\) WHERE \(NOT is_network_promo\)$/,
      ),
    ]);
  });
});
