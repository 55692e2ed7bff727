import type { Db } from '../../src/db/db.ts';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { TEST_DATABASE_URL, type TestDb } from './db.ts';

const waitFor = async (check: () => Promise<boolean>) => {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('timed out');
};

/**
 * Applies the migrations up to `upTo` while a projection batch holds `table` (row exclusive, as a
 * batch's writes do), so the migration's build waits on it; once it waits, `meanwhile` reads on
 * another connection with a 2 s lock timeout. Returns the migrations applied.
 */
export async function migrateWhileBatchHolds(
  test: TestDb,
  upTo: number,
  table: string,
  meanwhile: (reader: Db) => Promise<void>,
): Promise<string[]> {
  const open = () => openPostgres({ connectionString: TEST_DATABASE_URL, schema: test.schema, max: 1 });
  const writer = open();
  const reader = open();
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let holding!: () => void;
  const held = new Promise<void>((resolve) => {
    holding = resolve;
  });
  const batch = writer.transaction(async (tx) => {
    await tx.query(`lock table ${table} in row exclusive mode`);
    holding();
    await released;
  });
  try {
    await held;
    const migrating = migrate(
      test.db,
      loadMigrations().filter((m) => m.id <= upTo),
    );
    try {
      await waitFor(async () => {
        const { rows } = await reader.query<{ n: number }>(
          'select count(*)::int as n from pg_locks where not granted and relation = $1::regclass',
          [table],
        );
        return rows[0]!.n > 0;
      });
      await reader.query("set lock_timeout = '2s'");
      await meanwhile(reader);
    } finally {
      release();
      await batch;
    }
    return await migrating;
  } finally {
    await writer.close();
    await reader.close();
  }
}
