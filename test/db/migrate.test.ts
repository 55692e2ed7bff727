import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations, migrate, migrationsApplied } from '../../src/db/migrate.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { createPgliteDb, createTestDb, TEST_DATABASE_URL, type TestDb } from '../support/db.ts';

describe('migrate', () => {
  let testDb: TestDb | undefined;
  afterEach(async () => {
    await testDb?.drop();
    testDb = undefined;
  });

  it('applies every migration once, and a second run applies nothing', async () => {
    testDb = await createTestDb({ migrated: false });
    const first = await migrate(testDb.db);
    expect(first).toEqual(loadMigrations().map((migration) => migration.name));
    expect(await migrate(testDb.db)).toEqual([]);
    expect(await migrationsApplied(testDb.db)).toBe(true);
  });

  it('applies each migration exactly once when several processes migrate at the same moment', async () => {
    testDb = await createTestDb({ migrated: false });
    const schema = testDb.schema;
    const pools = Array.from({ length: 4 }, () =>
      openPostgres({ connectionString: TEST_DATABASE_URL, schema, max: 2 }),
    );
    try {
      const results = await Promise.all(pools.map((pool) => migrate(pool)));
      const applied = results.flat().sort();
      expect(applied).toEqual(
        loadMigrations()
          .map((migration) => migration.name)
          .sort(),
      );
      const { rows } = await testDb.db.query<{ n: number }>(
        'select count(*)::int as n from earshot_migrations',
      );
      expect(rows[0]?.n).toBe(loadMigrations().length);
    } finally {
      await Promise.all(pools.map((pool) => pool.close()));
    }
  });

  it('reports migrations as not applied on an empty database', async () => {
    testDb = await createTestDb({ migrated: false });
    expect(await migrationsApplied(testDb.db)).toBe(false);
  });

  it('migrates embedded PGlite with the same SQL', async () => {
    const db = await createPgliteDb({ migrated: false });
    try {
      expect((await migrate(db)).length).toBe(loadMigrations().length);
      expect(await migrate(db)).toEqual([]);
    } finally {
      await db.close();
    }
  });
});
