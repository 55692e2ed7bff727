import { foldWords } from '../../src/matching/engine/text-folding.ts';

/**
 * The passage index's layout (docs/search.md, "Index design"). A passage is at most 5 consecutive
 * lines. Rows hold windows of WINDOW lines starting at every STRIDE-th line, so every run of 5
 * lines lies inside one row; the weight of each word says which line of the row it came from:
 *
 *   line start → B, start+1 → D, start+2..start+4 → A, start+5 → C
 *
 * so lines start..start+4 are the weights ABD and lines start+1..start+5 the weights ACD, and each
 * line is "first" (B) or "second" (D) of exactly one row.
 */
export const PASSAGE_LINES = 5;
export const WINDOW = 6;
export const STRIDE = 2;
const WEIGHTS = ['B', 'D', 'A', 'A', 'A', 'C'] as const;
// PostgreSQL keeps positions up to 16383 and 256 positions per lexeme; longer lexemes are refused.
const MAX_POSITION = 16383;
const MAX_POSITIONS_PER_WORD = 256;
const MAX_WORD_BYTES = 2046;

/** A search term: one folded word, or the folded words of a quoted phrase. */
export type Term = readonly string[];

/** The folded words of each line, in line order. */
export const foldedLines = (texts: readonly string[]): string[][] => texts.map(foldWords);

/** Window rows of an episode: the start position of each and its tsvector literal. */
export function windowVectors(lines: readonly (readonly string[])[]): { start: number; words: string }[] {
  const rows: { start: number; words: string }[] = [];
  for (let start = 0; start < lines.length; start += STRIDE) {
    const positions = new Map<string, string[]>();
    let position = 0;
    const end = Math.min(lines.length, start + WINDOW);
    for (let k = start; k < end; k++) {
      const weight = WEIGHTS[k - start]!;
      for (const word of lines[k]!) {
        if (position === MAX_POSITION) break;
        position++;
        if (Buffer.byteLength(word) > MAX_WORD_BYTES) continue;
        const list = positions.get(word);
        if (list === undefined) positions.set(word, [`${position}${weight}`]);
        else if (list.length < MAX_POSITIONS_PER_WORD) list.push(`${position}${weight}`);
      }
      // A gap between lines, so a quoted phrase never runs from one line into the next.
      if (position < MAX_POSITION) position++;
    }
    let words = '';
    for (const [word, list] of positions) words += `${words ? ' ' : ''}'${word}':${list.join(',')}`;
    rows.push({ start, words });
  }
  return rows;
}

// Folded words are letters and digits only, so quoting needs no escapes.
const lexeme = (word: string, weights: string) => `'${word}':${weights}`;
const termQuery = (term: Term, weights: string) =>
  term.length === 1 ? lexeme(term[0]!, weights) : `(${term.map((w) => lexeme(w, weights)).join(' <-> ')})`;

/** Every term inside one passage of at most 5 lines (each phrase inside one line). */
export const allInPassage = (terms: readonly Term[]) =>
  ['ABD', 'ACD'].map((weights) => `(${terms.map((t) => termQuery(t, weights)).join(' & ')})`).join(' | ');

/** Any of the terms anywhere (ranked keyword match). */
export const anyTerm = (terms: readonly Term[]) => terms.map((t) => termQuery(t, 'ABCD')).join(' | ');

/** Any of the terms inside the row's first line (B) or second line (D): counts each line once. */
export const inFirstLine = (terms: readonly Term[]) => terms.map((t) => termQuery(t, 'B')).join(' | ');
export const inSecondLine = (terms: readonly Term[]) => terms.map((t) => termQuery(t, 'D')).join(' | ');
