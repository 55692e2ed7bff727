import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  foldedLines,
  LINE_SLOT,
  ROW_LINES,
  rowVectors,
  rowVectorsBinary,
  textRowVectors,
  textRowVectorsBinary,
} from '../../projections/search-passages/passages.ts';
import { createDb, ENGINES } from '../support/db.ts';
import { prng } from '../support/synthetic.ts';

// The projection builds an episode's rows from the lines' texts, scanning ASCII lines without a
// string per word (docs/search.md, "Where the targets stand"); the rows must be those of the
// lines folded by foldWords, byte for byte. Words of ASCII letters and digits are put in order as
// numbers of their first 7 letters, the rest as strings: PostgreSQL checks that order below.

const SEPARATORS = [' ', ' ', ' ', ', ', '. ', ' - ', "'", '\t', '?! ', '_', '\u007f', '\u0000'];
const NON_ASCII = ['é', 'Ö', 'ß', 'ﬁ', 'Σ', 'ς', '日本', '\u{1f600}', '\u00a0', 'e\u0301'];

/** An episode's lines of text: mixed case, digits, punctuation, some non-ASCII, repeats, very long lines and words. */
function texts(seed: number): string[] {
  const next = prng(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const letters = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  const word = (length: number) =>
    Array.from({ length }, () => letters[Math.floor(next() * letters.length)]).join('');
  const vocabulary = Array.from({ length: 1 + Math.floor(next() * 300) }, () =>
    word(1 + Math.floor(next() * 9)),
  );
  const text = (words: readonly string[]) =>
    (next() < 0.3 ? pick(SEPARATORS) : '') + words.map((w, k) => (k ? pick(SEPARATORS) : '') + w).join('');
  return Array.from({ length: Math.floor(next() * 150) }, () => {
    const shape = next();
    if (shape < 0.04) return '';
    if (shape < 0.06) return pick(SEPARATORS);
    // A word 11–300 times in a line (past 10 a line, past 256 a row).
    if (shape < 0.12)
      return text(
        Array.from({ length: 11 + Math.floor(next() * 290) }, (_, k) =>
          k % 2 ? vocabulary[0]! : pick(vocabulary),
        ),
      );
    if (shape < 0.14)
      return text(Array.from({ length: 690 + Math.floor(next() * 30) }, () => pick(vocabulary)));
    if (shape < 0.16) return text([pick(vocabulary), word(2040 + Math.floor(next() * 12)), pick(vocabulary)]);
    const words = Array.from({ length: Math.floor(next() * 25) }, () => pick(vocabulary));
    if (shape < 0.3)
      words.splice(Math.floor(next() * (words.length + 1)), 0, pick(vocabulary) + pick(NON_ASCII));
    return text(words);
  });
}

describe('index rows built from the lines’ texts', () => {
  it('are the rows of the lines folded by foldWords, byte for byte', () => {
    let rows = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const lines = texts(seed);
      const folded = foldedLines(lines);
      expect(textRowVectors(lines)).toEqual(rowVectors(folded));
      const binary = textRowVectorsBinary(lines);
      expect(binary).toEqual(rowVectorsBinary(folded));
      rows += binary.length;
    }
    expect(rows).toBeGreaterThan(150);
  });

  it('hold every word of lines that fold to more words than they have code units', () => {
    // "ﷺ" is one code unit and folds to four words: no count from a text's length may size them.
    const lines = Array.from({ length: 30 }, (_, k) => (k % 3 ? 'ﷺ' : 'ﷺaﷺ'));
    const folded = foldedLines(lines);
    expect(folded[1]).toHaveLength(4);
    expect(textRowVectors(lines)).toEqual(rowVectors(folded));
    expect(textRowVectorsBinary(lines)).toEqual(rowVectorsBinary(folded));
  });
});

/** ASCII episodes whose words share long prefixes (7 letters and more) and differ after them. */
function asciiLines(seed: number): string[][] {
  const next = prng(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const prefixes = ['', 'a', 'abcdefg', 'abcdefgh', 'zzzzzzz', '0000000', 'kalomin', 'kalomi', '9'];
  const letters = 'abcz09';
  const vocabulary = Array.from({ length: 1 + Math.floor(next() * 400) }, () => {
    const tail = Array.from({ length: Math.floor(next() * 6) }, () => pick([...letters])).join('');
    return pick(prefixes) + tail || 'x';
  });
  return Array.from({ length: Math.floor(next() * 90) }, () =>
    Array.from({ length: Math.floor(next() * 30) }, () => pick(vocabulary)),
  );
}

describe.each(ENGINES)('index rows of ASCII words on %s', (engine) => {
  let made: Awaited<ReturnType<typeof createDb>>;
  beforeAll(async () => {
    made = await createDb(engine, { migrated: false });
  });
  afterAll(() => made?.drop());

  it('list the lexemes in PostgreSQL’s order', async () => {
    let rows = 0;
    for (let seed = 1; seed <= 30; seed++) {
      const lines = asciiLines(seed);
      for (const { start, words } of rowVectors(lines)) {
        const occurrences = lines
          .slice(start, start + ROW_LINES)
          .flatMap((line, k) => line.map((word, i) => `'${word}':${k * LINE_SLOT + 1 + i}`));
        const { rows: found } = await made.db.query<{ text: string }>('select $1::tsvector::text as text', [
          occurrences.join(' '),
        ]);
        expect(words).toBe(found[0]!.text);
        rows++;
      }
    }
    expect(rows).toBeGreaterThan(50);
  });
});
