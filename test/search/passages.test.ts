import { describe, expect, it } from 'vitest';
import {
  anyTerm,
  everyTerm,
  foldedLines,
  LINE_SLOT,
  rowVectors,
  STRIDE,
  startsOf,
} from '../../projections/search-passages/passages.ts';
import { matchingLines, parseKeywords } from '../../src/search/keywords.ts';
import { occurrences } from './literal-entries.ts';

const letters = (n: number) => Array.from({ length: n }, (_, i) => `l${i}`);

describe('passage index layout', () => {
  it('starts a row of 24 lines at every 20th line, each line at the start of its own position slot', () => {
    const rows = rowVectors(foldedLines(letters(45)));
    expect(rows.map((r) => r.start)).toEqual([0, 20, 40]);
    const first = occurrences(rows[0]!.words);
    expect(first).toHaveLength(24);
    expect(first.slice(0, 2)).toEqual(["'l0':1", `'l1':${LINE_SLOT + 1}`]);
    expect(first.at(-1)).toBe(`'l23':${23 * LINE_SLOT + 1}`);
    expect(occurrences(rows[1]!.words)[0]).toBe("'l20':1");
    expect(rows[2]!.words).toBe("'l40':1 'l41':683 'l42':1365 'l43':2047 'l44':2729");
  });

  it('gives each line one row of which it is one of the first 20 lines', () => {
    expect(rowVectors(foldedLines(letters(24))).map((r) => r.start)).toEqual([0, 20]);
    expect(rowVectors(foldedLines(letters(20))).map((r) => r.start)).toEqual([0]);
    expect(rowVectors([])).toEqual([]);
  });

  it('keeps the words of a line at consecutive positions, so a phrase stays inside one line', () => {
    expect(occurrences(rowVectors([['quick', 'brown'], ['fox']])[0]!.words)).toEqual([
      "'quick':1",
      "'brown':2",
      "'fox':683",
    ]);
  });

  it('builds the candidate queries from folded terms, without weights', () => {
    const terms = parseKeywords('"Société Générale" chips');
    expect(terms).toEqual([['societe', 'generale'], ['chips']]);
    expect(everyTerm(terms)).toBe("('societe' <-> 'generale') & 'chips'");
    expect(anyTerm([['ada', 'lovelace'], ['ada']])).toBe("('ada' <-> 'lovelace') | 'ada'");
  });

  it("reads a row's passage mask as the first lines of its passages", () => {
    expect(startsOf(40, 0b101)).toEqual([40, 42]);
    expect(startsOf(0, 1 << (STRIDE - 1))).toEqual([STRIDE - 1]);
  });
});

describe('keywords', () => {
  it('keeps a quoted phrase whole, an unclosed quote as words, and drops duplicates', () => {
    expect(parseKeywords('Fox "the FOX" fox "open')).toEqual([['fox'], ['the', 'fox'], ['open']]);
  });

  it('marks the lines holding a term in each passage found, every term in it with `all`', () => {
    const lines = foldedLines(['chips', 'x', 'x', 'x', 'market', 'chips', 'x', 'x', 'x', 'x', 'market']);
    const words = (i: number) => lines[i]!;
    const terms = parseKeywords('chips market');
    // The passages starting at lines 0 and 1 hold both terms; the one at 6 (lines 6–10) only market.
    expect(matchingLines(lines.length, words, terms, true, [0, 1, 6])).toEqual([0, 4, 5]);
    expect(matchingLines(lines.length, words, terms, false, [0, 6, 10])).toEqual([0, 4, 10]);
  });
});
