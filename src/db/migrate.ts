import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Db } from './db.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../schemas/migrations/', import.meta.url));
// One advisory lock serialises every migrating process: each migration runs in one transaction
// that takes it, records its own number, then applies its SQL (graphile-worker's scheme).
const LOCK = "pg_advisory_xact_lock(hashtextextended('earshot:migrate', 0))";

export interface Migration {
  id: number;
  name: string;
  sql: string;
}

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{4}_[\w-]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      id: Number(file.slice(0, 4)),
      name: file.replace(/\.sql$/, ''),
      sql: readFileSync(dir + file, 'utf8'),
    }));
}

/** Applies every migration not yet applied; returns the names applied by this call. */
export async function migrate(db: Db, migrations = loadMigrations()): Promise<string[]> {
  await db.transaction(async (tx) => {
    await tx.query(`select ${LOCK}`);
    await tx.exec(
      `create table if not exists earshot_migrations (
         id integer primary key,
         name text not null,
         applied_at timestamptz not null default now()
       )`,
    );
  });
  const applied: string[] = [];
  for (const migration of migrations) {
    const done = await db.transaction(async (tx) => {
      await tx.query(`select ${LOCK}`);
      const inserted = await tx.query(
        'insert into earshot_migrations (id, name) values ($1, $2) on conflict (id) do nothing',
        [migration.id, migration.name],
      );
      if (inserted.rowCount === 0) return false;
      await tx.exec(migration.sql);
      return true;
    });
    if (done) applied.push(migration.name);
  }
  return applied;
}

/** True when every known migration is recorded as applied. */
export async function migrationsApplied(db: Db, migrations = loadMigrations()): Promise<boolean> {
  try {
    const { rows } = await db.query<{ id: number }>('select id from earshot_migrations');
    const have = new Set(rows.map((row) => row.id));
    return migrations.every((migration) => have.has(migration.id));
  } catch {
    return false;
  }
}
