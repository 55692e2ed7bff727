import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LINE_SLOT,
  ROW_LINES,
  rowVectors,
  rowVectorsBinary,
  STRIDE,
  WORDS_PER_LINE,
} from '../../projections/search-passages/passages.ts';
import { createDb, ENGINES } from '../support/db.ts';
import { prng } from '../support/synthetic.ts';

// The rows' words as the layout defines them (docs/search.md, "Index design"), written plainly: one
// literal entry per occurrence, PostgreSQL merging them. The projection builds the same values with
// typed arrays and one sort per episode; both must agree on varied episodes.

// Folded letters from ASCII to astral, and from U+E000 up (UTF-16 orders them before astral ones).
const LETTERS = [
  ...'abcdefghijklmnopqrstuvwxyz0123456789',
  ...'éüßøωσж日本語한',
  '\ufa0e',
  '\uffda',
  '\u{20000}',
  '\u{1f600}',
];

/** An episode's folded lines: short and long lines, empty ones, repeats, words too long for a lexeme. */
function episode(seed: number): string[][] {
  const next = prng(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const word = (length: number) => Array.from({ length }, () => pick(LETTERS)).join('');
  const vocabulary = Array.from({ length: 2 + Math.floor(next() * 200) }, () =>
    word(1 + Math.floor(next() * 6)),
  );
  return Array.from({ length: Math.floor(next() * 130) }, () => {
    const shape = next();
    if (shape < 0.05) return [];
    // A word 11–40 times in a line (past the 10 a line only matters past 256 a row).
    if (shape < 0.1)
      return Array.from({ length: 11 + Math.floor(next() * 30) }, (_, k) =>
        k % 2 ? vocabulary[0]! : pick(vocabulary),
      );
    if (shape < 0.12) return Array.from({ length: 700 }, (_, k) => `${pick(vocabulary)}${k}`);
    if (shape < 0.14) return [pick(vocabulary), word(700 + Math.floor(next() * 200)), pick(vocabulary)];
    return Array.from({ length: Math.floor(next() * 25) }, () => pick(vocabulary));
  });
}

/** Row `start`'s entries, one per occurrence, as the layout places them. */
function occurrenceLiteral(lines: readonly (readonly string[])[], start: number) {
  const entries: string[] = [];
  for (const [k, words] of lines.slice(start, start + ROW_LINES).entries())
    for (const [i, word] of words.slice(0, WORDS_PER_LINE).entries())
      if (Buffer.byteLength(word) <= 2046) entries.push(`'${word}':${k * LINE_SLOT + 1 + i}`);
  return entries.join(' ');
}

describe.each(ENGINES)('index rows built for an episode on %s', (engine) => {
  let made: Awaited<ReturnType<typeof createDb>>;
  beforeAll(async () => {
    made = await createDb(engine, { migrated: false });
  });
  afterAll(() => made?.drop());

  it('are the values of one entry per occurrence, for random Unicode episodes', async () => {
    let rows = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const lines = episode(seed);
      const built = rowVectors(lines);
      const binary = engine === 'postgres' ? rowVectorsBinary(lines) : undefined;
      expect(built.map((r) => r.start)).toEqual(
        Array.from({ length: Math.ceil(lines.length / STRIDE) }, (_, k) => k * STRIDE),
      );
      for (const [k, { start, words }] of built.entries()) {
        // No lexeme of these episodes passes 256 positions in a row, where the layout caps it.
        const { rows: found } = await made.db.query<{ same: boolean; text: string; most: number }>(
          `select $1::tsvector = $2::tsvector as same, $2::tsvector::text as text,
                  coalesce((select max(cardinality(u.positions)) from unnest($2::tsvector) u), 0) as most`,
          [words, occurrenceLiteral(lines, start)],
        );
        expect(found[0]!.most).toBeLessThanOrEqual(256);
        expect(found[0]!.same).toBe(true);
        expect(words).toBe(found[0]!.text);
        if (binary) {
          const { rows: sent } = await made.db.query<{ text: string }>('select $1::tsvector::text as text', [
            binary[k]!.words,
          ]);
          expect(sent[0]!.text).toBe(words);
        }
        rows++;
      }
    }
    expect(rows).toBeGreaterThan(100);
  });
});
