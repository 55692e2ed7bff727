import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from '../support/db.ts';
import { migrateWhileBatchHolds } from '../support/migration-in-use.ts';

describe('migration 0130 (catalog read speed) on a database in use', () => {
  let test: TestDb;

  beforeAll(async () => {
    test = await createTestDb({ migratedBefore: 130 });
  });
  afterAll(async () => {
    await test.drop();
  });

  it('leaves the catalog readable while its long steps run (here: waiting for a projection batch)', async () => {
    // A podcast_formats batch in flight: the migration's last index build waits for it to commit,
    // with every step before done.
    const applied = await migrateWhileBatchHolds(test, 130, 'podcast_formats', async (reader) => {
      const { rows } = await reader.query<{ n: number }>(
        `select count(*)::int as n from podcasts where search_title % 'harbor'
          union all select count(*)::int from catalog_episodes where search_title = 'harbor'
          union all select count(*)::int from catalog_episode_topics where podcast_id = 'pod-1'`,
      );
      expect(rows).toEqual([{ n: 0 }, { n: 0 }, { n: 0 }]);
    });
    expect(applied).toEqual(['0130_catalog_read_speed']);
  });
});
