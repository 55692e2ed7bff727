import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchPassagesProjection } from '../../projections/search-passages/projection.ts';
import type { Queryable } from '../../src/db/db.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import { applyBatch } from '../../src/subscriptions/projection-runner.ts';
import { episodeEvent } from '../fixtures/events.ts';
import { createDb, ENGINES } from '../support/db.ts';
import { prng } from '../support/synthetic.ts';

// The passage index's rows go to PostgreSQL as binary tsvectors (docs/search.md): the same stored
// values as the literals, on the path the projection runner takes.

// Letters from ASCII to astral, composed and decomposed accents, letters from U+E000 up (UTF-16
// orders them before astral ones, UTF-8 after) and some that fold to several letters.
const LETTERS = [
  ...'abcdefghijklmnopqrstuvwxyz0123456789',
  ...'éüßøñçÉÜ',
  'e\u0301',
  'o\u0308',
  ...'ωσςΔж日本語한',
  '\ufa0e',
  '\uff21',
  '\ufb01',
  '\uffda',
  '\u{20000}',
  '\u{1d49c}',
  '\u{10400}',
  '\u{1f600}',
];

function episodes(seed: number, count: number, prefix: string): RecordedEvent[] {
  const next = prng(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const word = (length: number) => Array.from({ length }, () => pick(LETTERS)).join('');
  return Array.from({ length: count }, (_, n) => {
    const vocabulary = Array.from({ length: 1 + Math.floor(next() * 40) }, () =>
      word(1 + Math.floor(next() * 8)),
    );
    // The first episode's rows hold no word at all (lines of punctuation): empty tsvectors.
    if (n === 0)
      return event(
        `${prefix}${n}`,
        n,
        Array.from({ length: 30 }, (_, k) => (k % 3 ? '... !' : '')),
      );
    const lines = Array.from({ length: Math.floor(next() * 90) }, () => {
      const shape = next();
      if (shape < 0.05) return '';
      // A word repeated past the 10 a line and the 256 a row, a line past 681 words, a long word.
      if (shape < 0.1) return Array.from({ length: 300 }, () => vocabulary[0]).join(' ');
      if (shape < 0.13) return Array.from({ length: 700 }, () => pick(vocabulary)).join(' ');
      if (shape < 0.15) return `${word(600)} ${pick(vocabulary)}`;
      return Array.from({ length: Math.floor(next() * 30) }, () => pick(vocabulary)).join(
        next() < 0.5 ? ' ' : ', ',
      );
    });
    return event(`${prefix}${n}`, n, lines);
  });
}

const event = (id: string, n: number, lines: string[]): RecordedEvent => ({
  id: `e-${id}`,
  streamId: `episode-${id}`,
  revision: 0,
  position: `${n + 1}`,
  type: 'EpisodeTranscribed',
  data: episodeEvent({ id, lines }),
  metadata: {},
  recordedAt: new Date(),
});

/** The transaction as the projection sees it, recording whether a statement sent a Buffer. */
function recorded(tx: Queryable, kind: Queryable['kind']) {
  const sent = { buffers: 0 };
  const q: Queryable = {
    ...(kind ? { kind } : {}),
    query: (text, params) => {
      if (params?.some((p) => Buffer.isBuffer(p))) sent.buffers++;
      return tx.query(text, params);
    },
    exec: (script) => tx.exec(script),
  };
  return { q, sent };
}

describe.each(ENGINES)('passage rows on %s', (engine) => {
  let made: Awaited<ReturnType<typeof createDb>>;
  beforeAll(async () => {
    made = await createDb(engine);
  });
  afterAll(() => made?.drop());

  it('reach the projection through a transaction that names its engine', async () => {
    // The runner applies a batch in db.transaction and hands the projection its client as it is.
    const kinds: unknown[] = [];
    const db = made.db;
    const watching = {
      ...db,
      transaction: <T>(fn: (tx: Queryable) => Promise<T>) =>
        db.transaction((tx) => {
          kinds.push(tx.kind);
          return fn(tx);
        }),
    };
    await applyBatch(watching, searchPassagesProjection, '', '', []);
    expect(kinds).toEqual([engine]);
  });
});

describe('passage rows in binary form on PostgreSQL', () => {
  let made: Awaited<ReturnType<typeof createDb>>;
  beforeAll(async () => {
    made = await createDb('postgres');
  });
  afterAll(() => made?.drop());

  it('store the values the literals store, for random Unicode episodes', async () => {
    for (const seed of [1, 2, 3]) {
      const binary = await made.db.transaction(async (tx) => {
        const { q, sent } = recorded(tx, tx.kind);
        await searchPassagesProjection.apply(q, episodes(seed, 12, `b${seed}-`));
        return sent;
      });
      // The same episodes through a connection that does not name its engine: literals.
      const text = await made.db.transaction(async (tx) => {
        const { q, sent } = recorded(tx, undefined);
        await searchPassagesProjection.apply(q, episodes(seed, 12, `t${seed}-`));
        return sent;
      });
      expect(binary.buffers).toBeGreaterThan(0);
      expect(text.buffers).toBe(0);
      const { rows } = await made.db.query<{ rows: number; differing: number; positions: number }>(
        `select count(*)::int as rows,
                count(*) filter (where b.words is distinct from t.words
                  or b.words::text is distinct from t.words::text
                  or pg_column_size(b.words) <> pg_column_size(t.words))::int as differing,
                coalesce(sum((select count(*) from unnest(b.words) u, unnest(u.positions) p)), 0)::int as positions
           from search_passage_rows b
           full join search_passage_rows t
             on t.episode_id = 't' || substr(b.episode_id, 2) and t.start = b.start
          where b.episode_id like $1 or t.episode_id like $2`,
        [`b${seed}-%`, `t${seed}-%`],
      );
      expect(rows[0]!.rows).toBeGreaterThan(20);
      expect(rows[0]!.positions).toBeGreaterThan(1000);
      expect(rows[0]!.differing).toBe(0);
      const empty = await made.db.query<{ n: number }>(
        `select count(*)::int as n from search_passage_rows where episode_id = $1 and words = ''::tsvector`,
        [`b${seed}-0`],
      );
      expect(empty.rows[0]!.n).toBe(2);
    }
  });
});
