import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type StoredLine,
  storedLines,
  transcriptsProjection,
} from '../../../projections/transcripts/projection.ts';
import { findTranscript, linesAt, transcriptsByIds } from '../../../projections/transcripts/queries.ts';
import type { Db } from '../../../src/db/db.ts';
import type { EventStore } from '../../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../../src/eventstore/postgres.ts';
import type { EpisodeTranscribed } from '../../../src/ingestion/events.ts';
import { ingestEvents } from '../../../src/ingestion/ingest.ts';
import { rebuildProjection } from '../../../src/subscriptions/projection-runner.ts';
import { episodeEvent } from '../../fixtures/events.ts';
import { createDb, ENGINES } from '../../support/db.ts';
import { catchUp } from '../../support/projections.ts';

// transcript_chunks holds each stored transcript's lines, 16 to a row in position order
// (docs/search.md, "Lines are not copied"), the only copy: whole transcripts are read from them.
const lines = (n: number, prefix = 'Line') => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}.`);

/** Line numbers out of order, with a gap and a duplicate: positions follow the sorted numbers. */
function shuffled(id: string): EpisodeTranscribed {
  const event = episodeEvent({ id, lines: lines(40, 'Shuffled') });
  const numbered = (event.transcript?.lines ?? []).map((line, i) => ({
    ...line,
    number: i === 7 ? 60 : i < 20 ? 40 - i : i * 3,
  }));
  return { ...event, transcript: { ...event.transcript, lines: numbered } };
}

const resent = (id: string, texts: string[]) =>
  episodeEvent({ id, lines: texts, occurred_at: '2026-11-21T10:00:00Z' });

describe.each(ENGINES)('transcript chunks on %s', (engine) => {
  let db: Db;
  let store: EventStore;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    ({ db, drop } = await createDb(engine));
    store = createPostgresEventStore(db);
    await send([
      shuffled('ep-shuffled'),
      episodeEvent({ id: 'ep-15', lines: lines(15) }),
      episodeEvent({ id: 'ep-16', lines: lines(16) }),
      episodeEvent({ id: 'ep-17', lines: lines(17) }),
      episodeEvent({ id: 'ep-shrinks', lines: lines(50) }),
      episodeEvent({ id: 'ep-removed', lines: lines(20) }),
      episodeEvent({ id: 'ep-empty', lines: [] }),
    ]);
  });
  afterAll(async () => {
    await store?.close();
    await drop?.();
  });

  /** The newest version sent of each episode. */
  const sent = new Map<string, EpisodeTranscribed>();
  async function send(events: EpisodeTranscribed[]) {
    await ingestEvents(store, events);
    for (const event of events) sent.set(event.episode.id, event);
    await catchUp(db, store, transcriptsProjection);
  }

  /** Each transcript as the episodes sent last hold it, by episode id. */
  const transcripts = async () =>
    [...sent.values()]
      .map((event) => ({ episode_id: event.episode.id, lines: storedLines(event) }))
      .filter((t) => t.lines.length > 0)
      .sort((a, b) => a.episode_id.localeCompare(b.episode_id));
  const chunks = async () =>
    (
      await db.query<{ episode_id: string; chunk: number; lines: string }>(
        'select episode_id, chunk, lines from transcript_chunks order by episode_id, chunk',
      )
    ).rows.map((row) => ({ ...row, lines: JSON.parse(row.lines) as StoredLine[] }));

  /** Every transcript's lines, 16 to a chunk, and no chunk of an episode without a transcript. */
  async function expectInStep() {
    const expected = (await transcripts()).flatMap(({ episode_id, lines }) =>
      Array.from({ length: Math.ceil(lines.length / 16) }, (_, chunk) => ({
        episode_id,
        chunk,
        lines: lines.slice(chunk * 16, chunk * 16 + 16),
      })),
    );
    expect(await chunks()).toEqual(expected);
    const held = await db.query<{ episode_id: string }>(
      'select episode_id from transcripts order by episode_id',
    );
    expect(held.rows.map((r) => r.episode_id)).toEqual((await transcripts()).map((t) => t.episode_id));
    for (const { episode_id, lines } of await transcripts())
      expect(await findTranscript(db, episode_id)).toEqual({ episode_id, language: 'en', lines });
    expect(
      (await transcriptsByIds(db, [...sent.keys()])).sort((a, b) => a.episode_id.localeCompare(b.episode_id)),
    ).toEqual((await transcripts()).map((t) => ({ ...t, language: 'en' })));
  }

  /** linesAt reads each position as the transcript holds it, and nothing past its end. */
  async function expectLinesAtPositions(id: string) {
    const whole = (await transcripts()).find((t) => t.episode_id === id)?.lines ?? [];
    const positions = Array.from({ length: whole.length + 18 }, (_, p) => p);
    const found = (await linesAt(db, new Map([[id, positions]]))).get(id) ?? [];
    expect(positions.map((p) => found[p])).toEqual(positions.map((p) => whole[p]));
  }

  it('chunks each transcript at 16 lines, in line-number order', async () => {
    await expectInStep();
    const byId = new Map<string, number[]>();
    for (const { episode_id, chunk, lines } of await chunks())
      byId.set(episode_id, [...(byId.get(episode_id) ?? []), chunk * 100 + lines.length]);
    expect(Object.fromEntries(byId)).toEqual({
      'ep-15': [15],
      'ep-16': [16],
      'ep-17': [16, 101],
      'ep-removed': [16, 104],
      'ep-shrinks': [16, 116, 216, 302],
      'ep-shuffled': [16, 116, 208],
    });
    const shuffledLines = (await chunks())
      .filter((c) => c.episode_id === 'ep-shuffled')
      .flatMap((c) => c.lines);
    expect(shuffledLines.map((l) => l.number)).toEqual(
      [...shuffledLines.map((l) => l.number)].sort((a, b) => a - b),
    );
    for (const id of ['ep-shuffled', 'ep-15', 'ep-16', 'ep-17', 'ep-empty']) await expectLinesAtPositions(id);
  });

  it('drops the chunks a re-sent episode no longer fills, and all of a removed transcript', async () => {
    await send([resent('ep-shrinks', lines(17, 'Shorter')), resent('ep-removed', [])]);
    await expectInStep();
    expect((await chunks()).filter((c) => c.episode_id === 'ep-shrinks').map((c) => c.chunk)).toEqual([0, 1]);
    expect((await chunks()).some((c) => c.episode_id === 'ep-removed')).toBe(false);
    await expectLinesAtPositions('ep-shrinks');
    expect((await linesAt(db, new Map([['ep-removed', [0, 1]]]))).get('ep-removed')).toEqual([]);
  });

  it('stores and reads back lines of any text: breaks, separators, NUL, lone surrogates', async () => {
    const odd = [
      'a\nb',
      'c\r\nd',
      'e\u2028f\u2029g',
      'nul \u0000 here',
      'lone \ud800 high',
      'lone \udc00 low',
      '\n',
    ];
    await send([
      episodeEvent({ id: 'ep-odd', lines: Array.from({ length: 40 }, (_, i) => odd[i % odd.length]!) }),
    ]);
    await expectInStep();
    await expectLinesAtPositions('ep-odd');
  });

  it('rebuilds the chunks to the same rows', async () => {
    const before = await chunks();
    await db.query(`insert into transcript_chunks (episode_id, chunk, lines) values ('ep-stale', 0, '[]')`);
    await rebuildProjection(db, store, transcriptsProjection);
    expect(await chunks()).toEqual(before);
    await expectInStep();
  });
});
