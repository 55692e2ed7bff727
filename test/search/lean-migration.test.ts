import { afterAll, describe, expect, it } from 'vitest';
import { anyTerm } from '../../projections/search-passages/passages.ts';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import { createDb, ENGINES } from '../support/db.ts';

const LEAN = 100;

describe.each(ENGINES)('migration 0100 on %s', (engine) => {
  let drop: (() => Promise<void>) | undefined;
  afterAll(() => drop?.());

  it('upgrades an index built before it: rows keep their words and are still found', async () => {
    const made = await createDb(engine, { migratedBefore: LEAN });
    drop = made.drop;
    const { db } = made;
    await db.query(
      `insert into search_passages (episode_id, start, words, lines)
       values ('ep-old', 0, $1::tsvector, '[{"number": 1, "text": "Wombat fund"}]')`,
      ["'wombat':1B 'fund':2B"],
    );
    expect(
      await migrate(
        db,
        loadMigrations().filter((m) => m.id <= LEAN),
      ),
    ).toEqual(['0100_search_passages_lean']);
    const { rows: columns } = await db.query<{ column_name: string }>(
      `select column_name from information_schema.columns
        where table_name = 'search_passages' and table_schema = current_schema() order by column_name`,
    );
    expect(columns.map((c) => c.column_name)).toEqual(['episode_id', 'start', 'words']);
    const { rows } = await db.query<{ episode_id: string }>(
      'select episode_id from search_passages where words @@ $1::tsquery',
      [anyTerm([['wombat', 'fund']])],
    );
    expect(rows).toEqual([{ episode_id: 'ep-old' }]);
  });
});
