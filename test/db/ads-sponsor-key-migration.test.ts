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

describe('migration 0161 (ads_sponsor_key covering) on a database in use', () => {
  let test: TestDb;
  let writer: Db;
  let reader: Db;

  beforeAll(async () => {
    test = await createTestDb({ migrated: false });
    await migrate(
      test.db,
      loadMigrations().filter((m) => m.id < 161),
    );
    await test.db.query(
      `insert into ads (id, episode_id, podcast_id, published_at, sponsor_id, sponsor_name, read_type, is_network_promo)
       values ('ad-1', 'ep-1', 'pod-1', '2026-11-01T00:00:00Z', 's1', 'Sponsor One', 'HOST_READ', false)`,
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

  it('leaves ads readable while the index is built (here: waiting for an ads batch)', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let holding!: () => void;
    const held = new Promise<void>((resolve) => {
      holding = resolve;
    });
    // An ads batch in flight: building the index waits for it to commit.
    const batch = writer.transaction(async (tx) => {
      await tx.query('lock table ads in row exclusive mode');
      holding();
      await released;
    });
    await held;
    const migrating = migrate(
      test.db,
      loadMigrations().filter((m) => m.id <= 161),
    );
    try {
      await waitFor(async () => {
        const { rows } = await reader.query<{ n: number }>(
          `select count(*)::int as n from pg_locks where not granted and relation = 'ads'::regclass`,
        );
        return rows[0]!.n > 0;
      });
      await reader.query("set lock_timeout = '2s'");
      const { rows } = await reader.query<{ n: number }>(
        `select count(*)::int as n from ads where coalesce(sponsor_id, sponsor_name) = 's1' and not is_network_promo`,
      );
      expect(rows).toEqual([{ n: 1 }]);
    } finally {
      await reader.query('reset lock_timeout');
      release();
      await batch;
    }
    expect(await migrating).toEqual(['0161_ads_sponsor_key_covering']);
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
