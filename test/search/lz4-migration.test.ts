import { afterAll, describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import { createDb, ENGINES } from '../support/db.ts';

const LZ4 = 220;
// Past TOAST's threshold, so the value is compressed.
const lines = JSON.stringify(
  Array.from({ length: 400 }, (_, n) => ({ n, text: `line ${n} of the wombat fund` })),
);

describe.each(ENGINES)('migration 0220 on %s', (engine) => {
  let drop: (() => Promise<void>) | undefined;
  afterAll(() => drop?.());

  it('sets lz4 on the lines where the server has it, leaves stored rows readable, and runs again', async () => {
    const made = await createDb(engine, { migratedBefore: LZ4 });
    drop = made.drop;
    const { db } = made;
    await db.query(
      `insert into transcripts (episode_id, podcast_id, lines) values ('ep-old', 'p', $1::json)`,
      [lines],
    );
    await db.query(
      `insert into transcript_chunks (episode_id, chunk, lines) values ('ep-old', 0, $1::json)`,
      [lines],
    );
    // Up to 0220: later migrations move the lines (0227 keeps them in transcript_chunks only).
    expect(
      await migrate(
        db,
        loadMigrations().filter((m) => m.id <= LZ4),
      ),
    ).toEqual(['0220_transcript_lz4']);
    await db.query(
      `insert into transcripts (episode_id, podcast_id, lines) values ('ep-new', 'p', $1::json)`,
      [lines],
    );
    const { rows } = await db.query<{ episode_id: string; same: boolean; method: string | null }>(
      `select episode_id, lines::text = $1 as same, pg_column_compression(lines) as method
         from transcripts order by episode_id`,
      [lines],
    );
    // PGlite has no lz4 (0A000 on `set compression lz4`): it keeps pglz.
    const lz4Columns = async () =>
      (
        await db.query<{ n: number }>(
          `select count(*)::int as n from pg_attribute
            where attrelid in ('transcripts'::regclass, 'transcript_chunks'::regclass)
              and attname = 'lines' and attcompression = 'l'`,
        )
      ).rows[0]!.n;
    const expected = engine === 'postgres' ? 'lz4' : 'pglz';
    expect(await lz4Columns()).toBe(engine === 'postgres' ? 2 : 0);
    expect(rows).toEqual([
      { episode_id: 'ep-new', same: true, method: expected },
      { episode_id: 'ep-old', same: true, method: 'pglz' },
    ]);
    const chunk = await db.query<{ same: boolean }>(
      `select lines::text = $1 as same from transcript_chunks where episode_id = 'ep-old'`,
      [lines],
    );
    expect(chunk.rows).toEqual([{ same: true }]);
    // Its text runs again without error (a restored or re-applied schema).
    await db.exec(loadMigrations().find((m) => m.id === LZ4)!.sql);
    expect(await lz4Columns()).toBe(engine === 'postgres' ? 2 : 0);
  });
});
