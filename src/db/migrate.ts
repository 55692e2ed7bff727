import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db, Queryable } from './db.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../schemas/migrations/', import.meta.url));
// One advisory lock serialises every migrating process: each migration runs in one transaction
// that takes it, records its own number and checksum, then applies its SQL (graphile-worker's scheme).
const LOCK = "pg_advisory_xact_lock(hashtextextended('earshot:migrate', 0))";

export interface Migration {
  id: number;
  name: string;
  /** The file's name, as operators see it in messages. */
  file: string;
  sql: string;
  /** sha256 of the text with \r\n and \r read as \n, so a checkout's line endings do not count. */
  checksum: string;
}

export const migrationChecksum = (sql: string) =>
  createHash('sha256').update(sql.replace(/\r\n?/g, '\n')).digest('hex');

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{4}_[\w-]+\.sql$/.test(file))
    .sort()
    .map((file) => {
      const sql = readFileSync(join(dir, file), 'utf8');
      return {
        id: Number(file.slice(0, 4)),
        name: file.replace(/\.sql$/, ''),
        file,
        sql,
        checksum: migrationChecksum(sql),
      };
    });
}

/** An applied migration's file no longer reads as it did when it was applied (docs/operations.md). */
export class MigrationChangedError extends Error {
  readonly errorCode = 'migration_changed';
  constructor(readonly files: string[]) {
    super(
      `${files.length === 1 ? 'Migration' : 'Migrations'} ${files.join(', ')} changed after ` +
        `${files.length === 1 ? 'it was' : 'they were'} applied to this database: restore the released ` +
        'file(s) (a schema change goes in a new migration file), or see docs/operations.md, "Migrations", ' +
        'to accept the new text.',
    );
    this.name = 'MigrationChangedError';
  }
}

interface AppliedRow {
  id: number;
  name: string;
  checksum: string | null;
}

/** The files whose applied row records another name or text than the file has now. */
function changedFiles(rows: AppliedRow[], migrations: Migration[]): string[] {
  const byId = new Map(rows.map((row) => [row.id, row]));
  return migrations
    .filter((migration) => {
      const row = byId.get(migration.id);
      return row && (row.name !== migration.name || row.checksum !== migration.checksum);
    })
    .map((migration) => migration.file);
}

async function bootstrap(tx: Queryable, migrations: Migration[]) {
  await tx.query(`select ${LOCK}`);
  await tx.exec(
    `create table if not exists earshot_migrations (
       id integer primary key,
       name text not null,
       applied_at timestamptz not null default now()
     )`,
  );
  // The runner's own table, not a numbered migration: the runner must read checksums before it
  // can trust any migration file, so the column cannot wait for one of them. Databases migrated
  // before checksums existed have null there: they adopt the files' current text once, below.
  await tx.exec('alter table earshot_migrations add column if not exists checksum text');
  for (const migration of migrations)
    await tx.query(
      'update earshot_migrations set checksum = $3 where id = $1 and name = $2 and checksum is null',
      [migration.id, migration.name, migration.checksum],
    );
  const { rows } = await tx.query<AppliedRow>('select id, name, checksum from earshot_migrations');
  const changed = changedFiles(rows, migrations);
  if (changed.length) throw new MigrationChangedError(changed);
}

/**
 * Applies every migration not yet applied; returns the names applied by this call. Refuses with
 * MigrationChangedError, before applying anything, when an applied migration's file changed.
 */
export async function migrate(db: Db, migrations = loadMigrations()): Promise<string[]> {
  await db.transaction((tx) => bootstrap(tx, migrations));
  const applied: string[] = [];
  for (const migration of migrations) {
    const done = await db.transaction(async (tx) => {
      await tx.query(`select ${LOCK}`);
      const inserted = await tx.query(
        'insert into earshot_migrations (id, name, checksum) values ($1, $2, $3) on conflict (id) do nothing',
        [migration.id, migration.name, migration.checksum],
      );
      if (inserted.rowCount === 0) {
        // Applied meanwhile by another process: by the same text, or this one must not go on.
        const { rows } = await tx.query<AppliedRow>(
          'select id, name, checksum from earshot_migrations where id = $1',
          [migration.id],
        );
        const changed = changedFiles(rows, [migration]);
        if (changed.length) throw new MigrationChangedError(changed);
        return false;
      }
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
