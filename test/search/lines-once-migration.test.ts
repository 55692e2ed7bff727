import { afterAll, describe, expect, it } from 'vitest';
import { storedLines, transcriptsProjection } from '../../projections/transcripts/projection.ts';
import { findTranscript, linesAt, transcriptsByIds } from '../../projections/transcripts/queries.ts';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { episodeEvent } from '../fixtures/events.ts';
import { createDb, ENGINES } from '../support/db.ts';
import { catchUp } from '../support/projections.ts';

// Migration 0227 keeps the lines of transcripts stored before it in transcript_chunks only, which
// 0170 filled from them: they read back as they were stored (docs/catalog.md, "Read models").
const CHUNKS = 170;
const ONCE = 227;

const lines = Array.from({ length: 40 }, (_, i) => `Line ${i + 1}: the wombat fund, "quoted" café.`);

describe.each(ENGINES)('migration 0227 on %s', (engine) => {
  let drop: (() => Promise<void>) | undefined;
  afterAll(() => drop?.());

  it('reads the transcripts stored before it whole and by position, as the projection now stores them', async () => {
    const made = await createDb(engine, { migratedBefore: CHUNKS });
    drop = made.drop;
    const { db } = made;
    const old = episodeEvent({ id: 'ep-old', lines });
    await db.query(
      `insert into transcripts (episode_id, podcast_id, language, lines) values ('ep-old', 'pod-1', 'en', $1::json)`,
      [JSON.stringify(storedLines(old))],
    );
    await migrate(
      db,
      loadMigrations().filter((m) => m.id < ONCE),
    );
    expect(await migrate(db)).toContain('0227_transcript_lines_once');
    const store = createPostgresEventStore(db);
    await ingestEvents(store, [episodeEvent({ id: 'ep-new', lines })]);
    await catchUp(db, store, transcriptsProjection);

    const expected = storedLines(old);
    expect(await findTranscript(db, 'ep-old')).toEqual({
      episode_id: 'ep-old',
      language: 'en',
      lines: expected,
    });
    expect((await findTranscript(db, 'ep-new'))?.lines).toEqual(expected);
    expect(
      (await transcriptsByIds(db, ['ep-new', 'ep-old'])).sort((a, b) =>
        a.episode_id.localeCompare(b.episode_id),
      ),
    ).toEqual([
      { episode_id: 'ep-new', language: 'en', lines: expected },
      { episode_id: 'ep-old', language: 'en', lines: expected },
    ]);
    const found = await linesAt(
      db,
      new Map([
        ['ep-old', [0, 17, 39]],
        ['ep-new', [0, 17, 39]],
      ]),
    );
    expect(found.get('ep-old')).toEqual(found.get('ep-new'));
    expect(found.get('ep-old')?.[17]).toEqual(expected[17]);
    const columns = await db.query<{ column_name: string }>(
      `select column_name from information_schema.columns
        where table_name = 'transcripts' and table_schema = current_schema() order by ordinal_position`,
    );
    expect(columns.rows.map((c) => c.column_name)).toEqual(['episode_id', 'podcast_id', 'language']);
    // The chunks are text now, and keep 0220's lz4 where the server has it.
    const chunkColumn = await db.query<{ type: string; compression: string }>(
      `select format_type(atttypid, atttypmod) as type, attcompression::text as compression from pg_attribute
        where attrelid = 'transcript_chunks'::regclass and attname = 'lines'`,
    );
    expect(chunkColumn.rows).toEqual([{ type: 'text', compression: engine === 'postgres' ? 'l' : '' }]);
  });
});

describe.each(ENGINES)('migration 0227 on %s, with transcripts stored before it', (engine) => {
  let drop: (() => Promise<void>) | undefined;
  afterAll(() => drop?.());

  it('keeps the lines of a transcript that has no chunks, and stores the chunks it rewrites with lz4', async () => {
    const made = await createDb(engine, { migratedBefore: CHUNKS });
    drop = made.drop;
    const { db } = made;
    // Long lines, so that their chunks (0170 fills them) are compressed; then one transcript written
    // without chunks, as a process older than 0170 wrote it during a rolling upgrade
    // (docs/operations.md).
    const long = Array.from({ length: 20 }, (_, i) => `Line ${i + 1} ${'of the wombat fund, '.repeat(20)}`);
    const chunked = episodeEvent({ id: 'ep-chunked', lines: long });
    await db.query(
      `insert into transcripts (episode_id, podcast_id, language, lines) values ('ep-chunked', 'pod-1', 'en', $1::json)`,
      [JSON.stringify(storedLines(chunked))],
    );
    await migrate(
      db,
      loadMigrations().filter((m) => m.id < ONCE),
    );
    const unchunked = episodeEvent({ id: 'ep-unchunked', lines });
    await db.query(
      `insert into transcripts (episode_id, podcast_id, language, lines) values ('ep-unchunked', 'pod-1', 'en', $1::json)`,
      [JSON.stringify(storedLines(unchunked))],
    );
    expect(await migrate(db)).toContain('0227_transcript_lines_once');

    expect(await findTranscript(db, 'ep-unchunked')).toEqual({
      episode_id: 'ep-unchunked',
      language: 'en',
      lines: storedLines(unchunked),
    });
    expect((await linesAt(db, new Map([['ep-unchunked', [17]]]))).get('ep-unchunked')?.[17]).toEqual(
      storedLines(unchunked)[17],
    );
    expect((await findTranscript(db, 'ep-chunked'))?.lines).toEqual(storedLines(chunked));
    const compressed = await db.query<{ chunk: number; compression: string | null }>(
      `select chunk, pg_column_compression(lines) as compression from transcript_chunks
        where episode_id = 'ep-chunked' order by chunk`,
    );
    const method = engine === 'postgres' ? 'lz4' : 'pglz';
    expect(compressed.rows).toEqual([
      { chunk: 0, compression: method },
      { chunk: 1, compression: method },
    ]);
  });
});
