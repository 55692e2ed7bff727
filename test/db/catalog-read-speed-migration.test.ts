import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/db.ts';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { createTestDb, TEST_DATABASE_URL, type TestDb } from '../support/db.ts';

const waitFor = async (check: () => Promise<boolean>) => {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('timed out');
};

describe('migration 0130 (catalog read speed) on a database in use', () => {
  let test: TestDb;
  let writer: Db;
  let reader: Db;

  beforeAll(async () => {
    test = await createTestDb({ migrated: false });
    await migrate(
      test.db,
      loadMigrations().filter((m) => m.id < 130),
    );
    writer = openPostgres({
      connectionString: TEST_DATABASE_URL,
      schema: test.schema,
      max: 1,
    });
    reader = openPostgres({
      connectionString: TEST_DATABASE_URL,
      schema: test.schema,
      max: 1,
    });
  });
  afterAll(async () => {
    await writer.close();
    await reader.close();
    await test.drop();
  });

  it('leaves the catalog readable while its long steps run (here: waiting for a projection batch)', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // A podcast_formats batch in flight: the migration's last index build waits for it to commit,
    // with every step before done.
    let holding!: () => void;
    const held = new Promise<void>((resolve) => {
      holding = resolve;
    });
    const batch = writer.transaction(async (tx) => {
      await tx.query('lock table podcast_formats in row exclusive mode');
      holding();
      await released;
    });
    await held;
    const migrating = migrate(
      test.db,
      loadMigrations().filter((m) => m.id <= 130),
    );
    try {
      await waitFor(async () => {
        const { rows } = await reader.query<{ n: number }>(
          `select count(*)::int as n from pg_locks where not granted and relation = 'podcast_formats'::regclass`,
        );
        return rows[0]!.n > 0;
      });
      await reader.query("set lock_timeout = '2s'");
      const { rows } = await reader.query<{ n: number }>(
        `select count(*)::int as n from podcasts where search_title % 'harbor'
          union all select count(*)::int from catalog_episodes where search_title = 'harbor'
          union all select count(*)::int from catalog_episode_topics where podcast_id = 'pod-1'`,
      );
      expect(rows).toEqual([{ n: 0 }, { n: 0 }, { n: 0 }]);
    } finally {
      await reader.query('reset lock_timeout');
      release();
      await batch;
    }
    expect(await migrating).toEqual(['0130_catalog_read_speed']);
  });
});
