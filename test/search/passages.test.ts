import { describe, expect, it } from 'vitest';
import {
  allInPassage,
  foldedLines,
  inFirstLine,
  windowVectors,
} from '../../projections/search-passages/passages.ts';
import { matchingLines, parseKeywords } from '../../src/search/keywords.ts';

describe('passage index layout', () => {
  it('starts a window of six lines at every second line, weighting each line by its place', () => {
    const rows = windowVectors(foldedLines(['a', 'b', 'c', 'd', 'e', 'f', 'g']));
    expect(rows.map((r) => r.start)).toEqual([0, 2, 4, 6]);
    expect(rows[0]!.words).toBe("'a':1B 'b':3D 'c':5A 'd':7A 'e':9A 'f':11C");
    expect(rows[3]!.words).toBe("'g':1B");
  });

  it('leaves a gap between lines so a phrase never runs from one line into the next', () => {
    expect(windowVectors([['quick', 'brown'], ['fox']])[0]!.words).toBe("'quick':1B 'brown':2B 'fox':4D");
  });

  it('builds queries from folded terms: both halves of a window, or one line', () => {
    const terms = parseKeywords('"Société Générale" chips');
    expect(terms).toEqual([['societe', 'generale'], ['chips']]);
    expect(allInPassage(terms)).toBe(
      "(('societe':ABD <-> 'generale':ABD) & 'chips':ABD) | (('societe':ACD <-> 'generale':ACD) & 'chips':ACD)",
    );
    expect(inFirstLine([['ada', 'lovelace']])).toBe("('ada':B <-> 'lovelace':B)");
  });
});

describe('keywords', () => {
  it('keeps a quoted phrase whole, an unclosed quote as words, and drops duplicates', () => {
    expect(parseKeywords('Fox "the FOX" fox "open')).toEqual([['fox'], ['the', 'fox'], ['open']]);
  });

  it('marks the lines of every passage of at most five lines, inside the rows found, that holds each term', () => {
    const lines = foldedLines(['chips', 'x', 'x', 'x', 'market', 'chips', 'x', 'x', 'x', 'x', 'market']);
    const words = (i: number) => lines[i]!;
    const rows = [0, 2, 4, 6, 8, 10];
    expect(matchingLines(lines.length, words, parseKeywords('chips market'), true, rows)).toEqual([0, 4, 5]);
    expect(matchingLines(lines.length, words, parseKeywords('chips market'), false, rows)).toEqual([
      0, 4, 5, 10,
    ]);
  });
});
