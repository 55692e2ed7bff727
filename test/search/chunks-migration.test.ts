import { afterAll, describe, expect, it } from 'vitest';
import { storedLines, transcriptsProjection } from '../../projections/transcripts/projection.ts';
import { linesAt } from '../../projections/transcripts/queries.ts';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { episodeEvent } from '../fixtures/events.ts';
import { createDb, ENGINES } from '../support/db.ts';
import { catchUp } from '../support/projections.ts';

// Migration 0170 fills transcript_chunks from the transcripts already stored, as the transcripts
// projection writes them (docs/search.md, "Lines are not copied").
const CHUNKS = 170;

const lines = Array.from({ length: 40 }, (_, i) => `Line ${i + 1}: the wombat fund.`);

describe.each(ENGINES)('migration 0170 on %s', (engine) => {
  let drop: (() => Promise<void>) | undefined;
  afterAll(() => drop?.());

  it('chunks the transcripts stored before it exactly as the projection chunks new ones', async () => {
    const made = await createDb(engine, { migratedBefore: CHUNKS });
    drop = made.drop;
    const { db } = made;
    const old = episodeEvent({ id: 'ep-old', lines });
    await db.query(
      `insert into transcripts (episode_id, podcast_id, language, lines) values ('ep-old', 'pod-1', 'en', $1::json)`,
      [JSON.stringify(storedLines(old))],
    );
    expect(
      await migrate(
        db,
        loadMigrations().filter((m) => m.id <= CHUNKS),
      ),
    ).toEqual(['0170_transcript_chunks']);
    await migrate(db);
    const store = createPostgresEventStore(db);
    await ingestEvents(store, [episodeEvent({ id: 'ep-new', lines })]);
    await catchUp(db, store, transcriptsProjection);

    const { rows } = await db.query<{ episode_id: string; chunk: number; lines: string }>(
      'select episode_id, chunk, lines from transcript_chunks order by episode_id, chunk',
    );
    const chunksOf = (id: string) =>
      rows.filter((r) => r.episode_id === id).map((r) => [r.chunk, JSON.parse(r.lines)]);
    expect(chunksOf('ep-old').map(([chunk]) => chunk)).toEqual([0, 1, 2]);
    expect(chunksOf('ep-old')).toEqual(chunksOf('ep-new'));

    const wanted = [0, 15, 16, 39, 40];
    const found = await linesAt(
      db,
      new Map([
        ['ep-old', wanted],
        ['ep-new', wanted],
        ['ep-none', [0]],
      ]),
    );
    for (const id of ['ep-old', 'ep-new'])
      expect(wanted.map((position) => found.get(id)?.[position]?.text)).toEqual([
        'Line 1: the wombat fund.',
        'Line 16: the wombat fund.',
        'Line 17: the wombat fund.',
        'Line 40: the wombat fund.',
        undefined,
      ]);
    expect(found.get('ep-none')).toEqual([]);
  });
});
