import { randomBytes } from 'node:crypto';
import type { Db } from '../../src/db/db.ts';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import { openPglite } from '../../src/db/pglite.ts';
import { openPostgres } from '../../src/db/postgres.ts';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * All migrations (the default), none (`migrated: false`), or those numbered below `migratedBefore`
 * and the event store's that its code reads (EVENT_STORE_MIGRATIONS), so that a test of an older
 * schema appends and reads events with the store of today.
 */
export interface MigrateOptions {
  migrated?: boolean;
  migratedBefore?: number;
}

/** The events' sizes (0265), which every read of "all" uses (docs/event-store.md, "Pages by size"). */
const EVENT_STORE_MIGRATIONS = new Set([265]);

async function migrateAsAsked(db: Db, options: MigrateOptions) {
  const before = options.migratedBefore;
  if (before !== undefined)
    await migrate(
      db,
      loadMigrations().filter((m) => m.id < before || EVENT_STORE_MIGRATIONS.has(m.id)),
    );
  else if (options.migrated !== false) await migrate(db);
}

export interface TestDb {
  db: Db;
  schema: string;
  /** Closes the pool and drops the schema. */
  drop(): Promise<void>;
}

/** A fresh, migrated schema on the test PostgreSQL server (one per test file). */
export async function createTestDb(
  options: MigrateOptions & { max?: number; timeZone?: string } = {},
): Promise<TestDb> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = openPostgres({ connectionString: TEST_DATABASE_URL, max: 1 });
  await admin.query(`create schema ${schema}`);
  await admin.close();
  const db = openPostgres({
    connectionString: options.timeZone
      ? withTimeZone(TEST_DATABASE_URL, options.timeZone)
      : TEST_DATABASE_URL,
    schema,
    max: options.max ?? 10,
  });
  await migrateAsAsked(db, options);
  return {
    db,
    schema,
    async drop() {
      await db.close();
      const cleanup = openPostgres({ connectionString: TEST_DATABASE_URL, max: 1 });
      await cleanup.query(`drop schema ${schema} cascade`);
      await cleanup.close();
    },
  };
}

/** The server URL with its sessions in `timeZone` (the server's own default may be any zone). */
function withTimeZone(connectionString: string, timeZone: string) {
  const url = new URL(connectionString);
  url.searchParams.set('options', `${url.searchParams.get('options') ?? ''} -c TimeZone=${timeZone}`.trim());
  return url.href;
}

/** A fresh, migrated in-memory PGlite. */
export async function createPgliteDb(options: MigrateOptions & { timeZone?: string } = {}): Promise<Db> {
  const db = await openPglite();
  if (options.timeZone) await db.exec(`set time zone '${options.timeZone}'`);
  await migrateAsAsked(db, options);
  return db;
}

/** Both engines, for suites that must pass on each: `describe.each(ENGINES)`. */
export const ENGINES = ['postgres', 'pglite'] as const;
export type Engine = (typeof ENGINES)[number];

/** A fresh database on `engine`, migrated as `options` ask. */
export async function createDb(
  engine: Engine,
  options: MigrateOptions & { timeZone?: string } = {},
): Promise<{ db: Db; drop(): Promise<void> }> {
  if (engine === 'postgres') return createTestDb(options);
  const db = await createPgliteDb(options);
  return { db, drop: () => db.close() };
}
