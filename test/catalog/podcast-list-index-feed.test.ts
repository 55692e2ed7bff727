// What the list index reads again when its sources move (docs/catalog.md, "The list index"): only
// the shows written by transactions its last snapshot did not see, also while a writing transaction
// stays open elsewhere on the server (which holds every later snapshot's xmin back), and every one of
// them, also when they commit out of the order they began in.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listPodcastStamps, type PodcastFilters } from '../../projections/podcasts/queries.ts';
import { PodcastListIndex } from '../../src/catalog/podcast-list-index.ts';
import type { Db, Queryable } from '../../src/db/db.ts';
import { createDb, TEST_DATABASE_URL } from '../support/db.ts';

const NOW = new Date('2026-11-20T12:00:00Z');
const BY_POPULARITY: PodcastFilters = { sort: 'popularity', now: NOW };

async function seed(db: Queryable, shows: number) {
  await db.query(
    `insert into podcasts (id, title, search_title, field_times, popularity, language)
     select 'p' || lpad(g::text, 5, '0'), 'Show ' || g, 'show ' || g, '{}', (g % 100) / 100.0, 'en'
       from generate_series(1, $1::int) g`,
    [shows],
  );
}

/** Moves the podcasts projection's checkpoint, as a projection's batch does. */
const moved = (db: Pick<Queryable, 'query'>) =>
  db.query(
    `insert into projection_checkpoints (name, position) values ('podcasts', '1')
     on conflict (name) do update set position = (projection_checkpoints.position::bigint + 1)::text, updated_at = now()`,
  );

/** `db` whose transactions note how many shows each of the index's reads of changes took. */
function counting(db: Db, reads: number[]): Db {
  const wrapped = Object.create(db) as Db;
  wrapped.transaction = (fn) =>
    db.transaction((tx) =>
      fn({
        kind: tx.kind,
        exec: (sql) => tx.exec(sql),
        query: async (text, params) => {
          const result = await tx.query(text, params);
          if (text.includes('l.changed >=') && text.includes("l.ancestry = ''"))
            reads.push(result.rows.length);
          return result as never;
        },
      }),
    );
  return wrapped;
}

/** The index's page once it has one (the first request after a move may be left to the SQL path). */
async function fromIndex(index: PodcastListIndex, db: Db, limit: number) {
  for (let i = 0; i < 200; i++) {
    const stamps = await index.stamps(db, BY_POPULARITY, limit, 0);
    if (stamps) return stamps;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the index did not answer');
}

describe('the list index reading what changed, on postgres', () => {
  let db: Db;
  let drop: () => Promise<void>;
  const clients: pg.Client[] = [];
  const client = async () => {
    const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await c.connect();
    const { rows } = await db.query<{ schema: string }>('select current_schema() as schema');
    await c.query(`set search_path to "${rows[0]?.schema}"`);
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    ({ db, drop } = await createDb('postgres'));
    await seed(db, 1_000);
  }, 120_000);
  afterAll(async () => {
    for (const c of clients) await c.end().catch(() => {});
    await drop?.();
  });

  it('takes only the shows written since, while a writing transaction stays open elsewhere', async () => {
    const reads: number[] = [];
    const spied = counting(db, reads);
    const index = new PodcastListIndex(2 ** 24);
    await fromIndex(index, spied, 5);
    const open = await client();
    await open.query('begin');
    await open.query('select pg_current_xact_id()');
    try {
      for (let round = 0; round < 4; round++) {
        await db.query(
          `update podcasts set popularity = popularity
            where id in (select id from podcasts order by id offset $1 limit 100)`,
          [round * 100],
        );
        await moved(db);
        expect(await fromIndex(index, spied, 10)).toEqual(await listPodcastStamps(db, BY_POPULARITY, 10, 0));
      }
    } finally {
      await open.query('rollback');
    }
    // the load reads none this way; each round's read takes its own 100 shows, not every show since the open one
    expect(reads).toEqual([100, 100, 100, 100]);
  }, 120_000);

  it('sees a transaction that began first and committed last', async () => {
    const index = new PodcastListIndex(2 ** 24);
    await fromIndex(index, db, 3);
    const first = await client();
    const second = await client();
    await first.query('begin');
    await first.query(
      `insert into podcasts (id, title, search_title, field_times, popularity) values ('began-first', 'A', 'a', '{}', 5)`,
    );
    await second.query('begin');
    await second.query(
      `insert into podcasts (id, title, search_title, field_times, popularity) values ('began-second', 'B', 'b', '{}', 4)`,
    );
    await moved(second);
    await second.query('commit');
    expect((await fromIndex(index, db, 3))[0]?.id).toBe('began-second');
    await moved(first);
    await first.query('commit');
    const page = await fromIndex(index, db, 3);
    expect(page).toEqual(await listPodcastStamps(db, BY_POPULARITY, 3, 0));
    expect(page.map((stamp) => stamp.id).slice(0, 2)).toEqual(['began-first', 'began-second']);
  }, 120_000);
});
