import {
  appendFileSync,
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/db.ts';
import {
  loadMigrations,
  MigrationChangedError,
  migrate,
  migrationChecksum,
  migrationsApplied,
} from '../../src/db/migrate.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { runCli, schemaUrl } from '../support/cli.ts';
import { createDb, createTestDb, ENGINES, TEST_DATABASE_URL, type TestDb } from '../support/db.ts';

const MIGRATIONS = fileURLToPath(new URL('../../schemas/migrations/', import.meta.url));
// The first landed text of the migrations edited afterwards (0002, 0003, 0030).
const LEGACY = fileURLToPath(new URL('./fixtures/legacy-migrations/', import.meta.url));

/** A copy of the migrations in a temporary directory, to edit; `upTo` keeps ids up to it. */
function copyMigrations(upTo = Number.POSITIVE_INFINITY): string {
  const dir = mkdtempSync(join(tmpdir(), 'earshot-migrations-'));
  for (const file of readdirSync(MIGRATIONS))
    if (Number(file.slice(0, 4)) <= upTo) copyFileSync(join(MIGRATIONS, file), join(dir, file));
  return dir;
}

/** Tables, columns, constraints, indexes and functions of the current schema, schema name left out. */
async function schemaShape(db: Db): Promise<string[]> {
  const { rows } = await db.query<{ item: string }>(
    `select replace(item, current_schema() || '.', '') as item from (
       select format('column %s.%s %s null=%s default=%s compression=%s', c.table_name, c.column_name,
                     c.data_type, c.is_nullable, c.column_default, a.attcompression) as item
         from information_schema.columns c
         join pg_attribute a on a.attrelid = format('%I.%I', c.table_schema, c.table_name)::regclass
                            and a.attname = c.column_name
        where c.table_schema = current_schema()
       union all
       select format('constraint %s %s %s', r.relname, k.conname, pg_get_constraintdef(k.oid))
         from pg_constraint k join pg_class r on r.oid = k.conrelid
        where r.relnamespace = current_schema()::regnamespace
       union all
       select format('index %s', indexdef) from pg_indexes where schemaname = current_schema()
       union all
       select format('function %s', pg_get_functiondef(p.oid))
         from pg_proc p where p.pronamespace = current_schema()::regnamespace
     ) shape
     order by item`,
  );
  return rows.map((row) => row.item);
}

describe.each(ENGINES)('migrate on %s', (engine) => {
  let opened: { db: Db; drop(): Promise<void> }[] = [];
  const open = async () => {
    const handle = await createDb(engine, { migrated: false });
    opened.push(handle);
    return handle.db;
  };
  let dirs: string[] = [];
  const tempMigrations = (upTo?: number) => {
    const dir = copyMigrations(upTo);
    dirs.push(dir);
    return dir;
  };
  afterEach(async () => {
    await Promise.all(opened.map((handle) => handle.drop()));
    opened = [];
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    dirs = [];
  });

  it('applies every migration once, records its checksum, and a second run applies nothing', async () => {
    const db = await open();
    expect(await migrate(db)).toEqual(loadMigrations().map((migration) => migration.name));
    expect(await migrate(db)).toEqual([]);
    expect(await migrationsApplied(db)).toBe(true);
    const { rows } = await db.query<{ name: string; checksum: string }>(
      'select name, checksum from earshot_migrations order by id',
    );
    expect(rows).toEqual(loadMigrations().map(({ name, checksum }) => ({ name, checksum })));
  });

  it('refuses, naming the file and applying nothing, once an applied migration was edited', async () => {
    const db = await open();
    const dir = tempMigrations();
    await migrate(db, loadMigrations(dir));
    appendFileSync(join(dir, '0003_entities.sql'), '\ncreate index entities_name on entities (name);\n');
    writeFileSync(join(dir, '9999_later.sql'), 'create table later (id int);');

    const refusal = await migrate(db, loadMigrations(dir)).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(MigrationChangedError);
    expect((refusal as MigrationChangedError).files).toEqual(['0003_entities.sql']);
    expect((refusal as Error).message).toContain('0003_entities.sql');
    expect(await db.query("select 1 from earshot_migrations where name = '9999_later'")).toMatchObject({
      rowCount: 0,
    });
  });

  it('reads a migration checked out with CRLF line endings as unchanged', async () => {
    const db = await open();
    const dir = tempMigrations();
    await migrate(db, loadMigrations(dir));
    const file = join(dir, '0002_eventstore.sql');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/\n/g, '\r\n'));
    expect(await migrate(db, loadMigrations(dir))).toEqual([]);
  });

  it('adopts the current text of a database migrated before checksums, then enforces it', async () => {
    const db = await open();
    const dir = tempMigrations();
    await migrate(db, loadMigrations(dir));
    await db.exec('alter table earshot_migrations drop column checksum');

    expect(await migrate(db, loadMigrations(dir))).toEqual([]);
    const { rows } = await db.query<{ checksum: string }>(
      'select checksum from earshot_migrations order by id',
    );
    expect(rows.map((row) => row.checksum)).toEqual(
      loadMigrations(dir).map((migration) => migration.checksum),
    );

    appendFileSync(join(dir, '0001_platform.sql'), '\n-- edited\n');
    await expect(migrate(db, loadMigrations(dir))).rejects.toThrow(/0001_platform\.sql/);
  });

  it('accepts an edited text once the operator clears its recorded checksum', async () => {
    const db = await open();
    const dir = tempMigrations();
    await migrate(db, loadMigrations(dir));
    appendFileSync(join(dir, '0010_alerts.sql'), '\n-- a comment added after release\n');
    await expect(migrate(db, loadMigrations(dir))).rejects.toThrow(MigrationChangedError);

    await db.query("update earshot_migrations set checksum = null where name = '0010_alerts'");
    expect(await migrate(db, loadMigrations(dir))).toEqual([]);
    const { rows } = await db.query<{ checksum: string }>(
      'select checksum from earshot_migrations where id = 10',
    );
    expect(rows[0]?.checksum).toBe(migrationChecksum(readFileSync(join(dir, '0010_alerts.sql'), 'utf8')));
  });

  it('brings a database migrated before 0002, 0003 and 0030 were edited to the same schema as a new one', async () => {
    const legacy = await open();
    const dir = tempMigrations(30);
    for (const file of readdirSync(LEGACY)) copyFileSync(join(LEGACY, file), join(dir, file));
    await migrate(legacy, loadMigrations(dir));
    await legacy.query(
      `insert into entities (id, slug, name, entity_type, occurred_at, search_names, search_text)
       values ('e1', 'acme', 'Acme', 'COMPANY', now(), '{acme,"acme corp"}', 'acme acme corp')`,
    );
    await legacy.query(
      `insert into events (stream_id, stream_revision, event_id, type, data)
       values ('s-1', 0, 'ev-1', 'Something', '{"b": 1, "a": 2}')`,
    );
    // The runner of that time recorded no checksums.
    await legacy.exec('alter table earshot_migrations drop column checksum');

    expect(await migrate(legacy)).toContain('0042_converge_edited_migrations');
    const fresh = await open();
    await migrate(fresh);
    expect(await schemaShape(legacy)).toEqual(await schemaShape(fresh));
    const names = await legacy.query<{ name: string }>(
      "select name from entity_names where entity_id = 'e1' order by name",
    );
    expect(names.rows.map((row) => row.name)).toEqual(['acme', 'acme corp']);
    const event = await legacy.query<{ data: unknown }>("select data from events where event_id = 'ev-1'");
    expect(event.rows[0]?.data).toEqual({ a: 2, b: 1 });
    expect(await migrate(legacy)).toEqual([]);
  });
});

describe('migrate with several processes', () => {
  let testDb: TestDb | undefined;
  afterEach(async () => {
    await testDb?.drop();
    testDb = undefined;
  });

  it('applies each migration exactly once, with its checksum, when several processes migrate at the same moment', async () => {
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
      const { rows } = await testDb.db.query<{ checksum: string }>(
        'select checksum from earshot_migrations order by id',
      );
      expect(rows.map((row) => row.checksum)).toEqual(
        loadMigrations().map((migration) => migration.checksum),
      );
    } finally {
      await Promise.all(pools.map((pool) => pool.close()));
    }
  });

  it('reports migrations as not applied on an empty database', async () => {
    testDb = await createTestDb({ migrated: false });
    expect(await migrationsApplied(testDb.db)).toBe(false);
  });
});

describe('earshot migrate and start-up with a changed migration', () => {
  let testDb: TestDb | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await testDb?.drop();
    testDb = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A database that applied another text of 0003_entities.sql than the one installed. */
  async function migratedWithOtherText() {
    testDb = await createTestDb({ migrated: false });
    dir = copyMigrations();
    appendFileSync(join(dir, '0003_entities.sql'), '\ncreate index entities_name on entities (name);\n');
    await migrate(testDb.db, loadMigrations(dir));
    const dataDir = mkdtempSync(join(tmpdir(), 'earshot-migrate-cli-'));
    return { DATABASE_URL: schemaUrl(testDb.schema), DATA_DIR: dataDir };
  }

  it('earshot migrate --json refuses with one JSON error naming the file and exits non-zero', async () => {
    const env = await migratedWithOtherText();
    const result = await runCli(['migrate', '--json'], env);
    expect(result.code).not.toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const body = JSON.parse(lines[0]!);
    expect(body).toEqual({
      error: { code: 'migration_changed', message: expect.stringContaining('0003_entities.sql') },
    });
    expect(result.stderr).toContain('0003_entities.sql');
  });

  it('earshot migrate without --json names the file on stderr', async () => {
    const env = await migratedWithOtherText();
    const result = await runCli(['migrate'], env);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^earshot: Migration 0003_entities\.sql changed after it was applied/);
  });

  it('earshot serve refuses to start, naming the file', async () => {
    const env = await migratedWithOtherText();
    const result = await runCli(['serve'], { ...env, PORT: '0', HOST: '127.0.0.1' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('0003_entities.sql');
  });
});
