import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LINE_SLOT,
  POSITIONS_PER_LINE,
  ROW_LINES,
  rowVectors,
  rowVectorsBinary,
  WORDS_PER_LINE,
} from '../../projections/search-passages/passages.ts';
import { createDb, createTestDb, ENGINES, type TestDb } from '../support/db.ts';
import { occurrences } from './literal-entries.ts';

// Each index row's tsvector literal within PostgreSQL's limits: positions up to 16383, 256
// positions per lexeme, lexemes under 2 KB (docs/search.md, "Index design").
const repeat = (word: string, n: number) => Array.from({ length: n }, () => word);
const numbered = (n: number, prefix = 'w') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

let test: TestDb;
beforeAll(async () => {
  test = await createTestDb({ migrated: false });
});
afterAll(() => test?.drop());

const stored = async (words: string) =>
  (
    await test.db.query<{ n: number; last: number }>(
      `select length($1::tsvector) as n,
              (select max(p) from unnest($1::tsvector) u, unnest(u.positions) p)::int as last`,
      [words],
    )
  ).rows[0]!;

describe('index row literals', () => {
  it('keeps the first 10 positions of a word in each line, so no lexeme passes 256 in a row', async () => {
    const lines = Array.from({ length: ROW_LINES }, () => [...repeat('wombat', 300), 'fund']);
    const [row] = rowVectors(lines);
    const wombats = occurrences(row!.words).filter((e) => e.startsWith("'wombat':"));
    expect(wombats).toHaveLength(ROW_LINES * POSITIONS_PER_LINE);
    expect(wombats.slice(0, 11)).toEqual([
      ...Array.from({ length: POSITIONS_PER_LINE }, (_, i) => `'wombat':${i + 1}`),
      `'wombat':${LINE_SLOT + 1}`,
    ]);
    // Every word after the repeats keeps its place: fund is word 301 of each line.
    expect(occurrences(row!.words).filter((e) => e.startsWith("'fund':"))[23]).toBe(
      `'fund':${23 * LINE_SLOT + 301}`,
    );
    // PostgreSQL keeps every position sent: the 24th line's wombats are all there.
    const { rows } = await test.db.query<{ n: number }>(
      `select cardinality(u.positions) as n from unnest($1::tsvector) u where u.lexeme = 'wombat'`,
      [row!.words],
    );
    expect(rows[0]!.n).toBe(240);
  });

  it('indexes the first 681 words of a line and never passes position 16383', async () => {
    const lines = Array.from({ length: ROW_LINES }, (_, k) => numbered(700, `l${k}w`));
    const [row] = rowVectors(lines);
    const words = occurrences(row!.words);
    expect(words).toHaveLength(ROW_LINES * WORDS_PER_LINE);
    expect(words.at(-1)).toBe(`'l23w680':${23 * LINE_SLOT + 681}`);
    expect(await stored(row!.words)).toEqual({ n: ROW_LINES * WORDS_PER_LINE, last: 16_367 });
  });

  it('leaves out a word too long for a lexeme, keeping its position', () => {
    const long = 'é'.repeat(1100);
    const fits = 'é'.repeat(1000);
    expect(occurrences(rowVectors([['a', 'x'.repeat(3000), long, 'b'], [fits]])[0]!.words)).toEqual([
      "'a':1",
      "'b':4",
      `'${fits}':683`,
    ]);
  });

  it('leaves out the longest words when a row would pass the 1 MB a tsvector holds', async () => {
    const long = (k: number) => `${'x'.repeat(1990)}${String(k).padStart(4, '0')}`;
    const lines = Array.from({ length: 2 }, (_, line) => [
      'fund',
      ...Array.from({ length: 600 }, (_, k) => long(line * 600 + k)),
      'wombat',
    ]);
    const [row] = rowVectors(lines);
    const kept = occurrences(row!.words);
    expect(kept).toContain("'fund':1");
    expect(kept).toContain(`'wombat':${LINE_SLOT + 602}`);
    expect(kept.length).toBeGreaterThan(400);
    expect(kept.length).toBeLessThan(1202);
    // PostgreSQL takes the literal: every lexeme kept is stored.
    const { n } = await stored(row!.words);
    expect(n).toBe(row!.words.split(' ').length);
  });

  it('writes nothing for a line without words, which keeps its slot', () => {
    expect(rowVectors([[], ['a'], [], ['b']]).map((r) => r.words)).toEqual(["'a':683 'b':2047"]);
  });
});

describe.each(ENGINES)('index row literals on %s', (engine) => {
  let made: Awaited<ReturnType<typeof createDb>>;
  beforeAll(async () => {
    made = await createDb(engine, { migrated: false });
  });
  afterAll(() => made?.drop());

  it('list each lexeme once, positions ascending, as the text PostgreSQL gives back (UTF-8 byte order)', async () => {
    // Words differing only in length, in their last byte, above U+D800 (U+FA0E sorts before an
    // astral letter in UTF-8, after it in UTF-16), accents, digits, repeats across lines.
    const lines = [
      ['zeta', 'alpha', 'zeta', 'al', 'a', 'aa', 'ab', 'b', 'ba', 'société', 'ωmega', '日本', 'b2', '10'],
      ['alpha', 'zeta', 'école', 'al', '\u{20000}', '\ufa0e', 'z', 'é', 'e', '\u{20000}x', '\ufa0ez'],
      ...Array.from({ length: ROW_LINES }, (_, k) => [...repeat('wombat', 5), 'alpha', `w${k}`]),
    ];
    for (const { start, words } of rowVectors(lines)) {
      // The same value written one entry per occurrence, in position order.
      const occurrences = lines
        .slice(start, start + ROW_LINES)
        .flatMap((line, k) => line.map((word, i) => `'${word}':${k * LINE_SLOT + 1 + i}`));
      const { rows } = await made.db.query<{ text: string; same: boolean }>(
        'select $1::tsvector::text as text, $1::tsvector = $2::tsvector as same',
        [words, occurrences.join(' ')],
      );
      expect(rows[0]!.same).toBe(true);
      expect(words).toBe(rows[0]!.text);
    }
    expect(rowVectors(lines)[0]!.words).toContain(`'zeta':1,3,${LINE_SLOT + 2} `);
  });
});

describe('index rows in binary form (PostgreSQL)', () => {
  it('are the values of the literals, in every case the literals handle', async () => {
    const long = (k: number) => `${'x'.repeat(1990)}${String(k).padStart(4, '0')}`;
    const cases: string[][][] = [
      // PostgreSQL's order above U+D800, accents, digits, repeats across lines, several rows.
      [
        ['zeta', 'alpha', 'zeta', 'al', 'a', 'aa', 'ab', 'b', 'ba', 'société', 'ωmega', '日本', 'b2', '10'],
        ['alpha', 'zeta', 'école', 'al', '\u{20000}', '\ufa0e', 'z', 'é', 'e', '\u{20000}x', '\ufa0ez'],
        ...Array.from({ length: ROW_LINES * 2 }, (_, k) => [...repeat('wombat', 5), 'alpha', `w${k}`]),
      ],
      // A word capped at 10 positions a line, lines past 681 words, empty lines, a word too long.
      Array.from({ length: ROW_LINES }, () => [...repeat('wombat', 300), 'fund']),
      Array.from({ length: ROW_LINES }, (_, k) => numbered(700, `l${k}w`)),
      [[], ['a', 'x'.repeat(3000), 'é'.repeat(1100), 'é'.repeat(1000)], [], ['b']],
      // A row past the 1 MB a tsvector holds.
      Array.from({ length: 2 }, (_, line) => [
        'fund',
        ...Array.from({ length: 600 }, (_, k) => long(line * 600 + k)),
      ]),
    ];
    for (const lines of cases) {
      const text = rowVectors(lines);
      const binary = rowVectorsBinary(lines);
      expect(binary.map((r) => r.start)).toEqual(text.map((r) => r.start));
      for (const [k, row] of binary.entries()) {
        const { rows } = await test.db.query<{ text: string }>('select $1::tsvector::text as text', [
          row.words,
        ]);
        expect(rows[0]!.text).toBe(text[k]!.words);
      }
    }
  });
});
