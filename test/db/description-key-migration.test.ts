import { afterAll, describe, expect, it } from 'vitest';
import { DESCRIPTION_KEY_CHARS } from '../../projections/podcasts/projection.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createDb, ENGINES } from '../support/db.ts';

const CUT = 258;

describe.each(ENGINES)('migration 0258 (podcast description key cut) on %s', (engine) => {
  let drop: (() => Promise<void>) | undefined;
  afterAll(() => drop?.());

  it('cuts the keys written before it as the projection now writes them, and leaves the others', async () => {
    const made = await createDb(engine, { migratedBefore: CUT });
    drop = made.drop;
    const { db } = made;
    // Astral characters (two UTF-16 code units each) and a space right at the cut.
    const long = 'ab 😀 '.repeat(40_000);
    const atLimit = 'x'.repeat(DESCRIPTION_KEY_CHARS);
    // Under 100,000 characters but over 100,000 bytes: not cut.
    const wideShort = '😀'.repeat(30_000);
    await db.query(
      `insert into podcasts (id, title, search_title, search_description, field_times)
       select k, k, k, d, '{}' from unnest($1::text[], $2::text[]) as r(k, d)`,
      [
        ['long', 'limit', 'wide', 'none'],
        [long, atLimit, wideShort, null],
      ],
    );
    expect(await migrate(db)).toContain('0258_podcast_description_key_cut');
    const { rows } = await db.query<{ id: string; key: string | null }>(
      'select id, search_description as key from podcasts order by id',
    );
    const projected = Array.from(long).slice(0, DESCRIPTION_KEY_CHARS).join('').trimEnd();
    expect(projected.endsWith('😀')).toBe(true);
    expect(rows).toEqual([
      { id: 'limit', key: atLimit },
      { id: 'long', key: projected },
      { id: 'none', key: null },
      { id: 'wide', key: wideShort },
    ]);
  });
});
