import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { windowVectors } from '../../projections/search-passages/passages.ts';
import { createTestDb, type TestDb } from '../support/db.ts';

// Each index row's tsvector literal within PostgreSQL's limits: positions up to 16383, 256
// positions per lexeme, lexemes under 2 KB (docs/search.md, "Index design").
const repeat = (word: string, n: number) => Array.from({ length: n }, () => word);
const numbered = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`);
const entries = (words: string) => words.split(' ');

let test: TestDb;
beforeAll(async () => {
  test = await createTestDb({ migrated: false });
});
afterAll(() => test?.drop());

describe('index row literals', () => {
  it('sends the first 256 positions of a lexeme in a row, across lines, and every word after them', async () => {
    const lines = [repeat('wombat', 200), [...repeat('wombat', 100), 'fund']];
    const [row] = windowVectors(lines);
    const wombats = entries(row!.words).filter((e) => e.startsWith("'wombat':"));
    expect(wombats).toHaveLength(256);
    expect([wombats[0], wombats[199], wombats[200], wombats[255]]).toEqual([
      "'wombat':1B",
      "'wombat':200B",
      "'wombat':202D",
      "'wombat':257D",
    ]);
    expect(entries(row!.words).at(-1)).toBe("'fund':302D");
    // PostgreSQL stores the same vector as from every position: it keeps a lexeme's first 256.
    const every = [
      ...lines[0]!.map((_, i) => `'wombat':${i + 1}B`),
      ...lines[1]!.map((w, i) => `'${w}':${202 + i}D`),
    ].join(' ');
    const { rows } = await test.db.query<{ same: boolean }>('select $1::tsvector = $2::tsvector as same', [
      row!.words,
      every,
    ]);
    expect(rows[0]!.same).toBe(true);
  });

  it('counts positions from 1 in every row, weights past the 512th position too', () => {
    const rows = windowVectors([numbered(600), ['z'], ['y'], ['x']]);
    expect(entries(rows[0]!.words).slice(-5)).toEqual([
      "'w598':599B",
      "'w599':600B",
      "'z':602D",
      "'y':604A",
      "'x':606A",
    ]);
    expect(rows[1]!.words).toBe("'y':1B 'x':3D");
  });

  it('stops a row at position 16383', async () => {
    const rows = windowVectors([numbered(17_000), ['after']]);
    const words = entries(rows[0]!.words);
    expect(words).toHaveLength(16_383);
    expect(words.at(-1)).toBe("'w16382':16383B");
    const { rows: stored } = await test.db.query<{ n: number }>('select length($1::tsvector) as n', [
      rows[0]!.words,
    ]);
    expect(stored[0]!.n).toBe(16_383);
  });

  it('leaves out a word too long for a lexeme, keeping its position', () => {
    const long = 'é'.repeat(1100);
    const fits = 'é'.repeat(1000);
    expect(windowVectors([['a', 'x'.repeat(3000), long, 'b'], [fits]])[0]!.words).toBe(
      `'a':1B 'b':4B '${fits}':6D`,
    );
  });

  it('writes nothing for a line without words, which takes only its gap', () => {
    expect(windowVectors([[], ['a'], [], ['b']]).map((r) => r.words)).toEqual(["'a':2D 'b':5A", "'b':2D"]);
  });
});
