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
// "<position><weight>" of each line of a row, for the positions most rows reach, built once.
const SUFFIXES = WEIGHTS.map((weight) => Array.from({ length: 512 }, (_, p) => `${p}${weight}`));
// PostgreSQL keeps positions up to 16383 and 256 positions per lexeme; longer lexemes are refused.
const MAX_POSITION = 16383;
const MAX_POSITIONS_PER_WORD = 256;
const MAX_WORD_BYTES = 2046;

/** A search term: one folded word, or the folded words of a quoted phrase. */
export type Term = readonly string[];

/** The folded words of each line, in line order. */
export const foldedLines = (texts: readonly string[]): string[][] => texts.map(foldWords);

/**
 * Window rows of an episode: the start position of each and its tsvector literal. A lexeme may be
 * listed once per occurrence: PostgreSQL merges the positions of repeated lexemes on input.
 */
export function windowVectors(lines: readonly (readonly string[])[]): { start: number; words: string }[] {
  // Each line's words with their quotes, built once; a row only adds positions and its weight.
  const quoted = lines.map((words) => words.map((w) => (fitsLexeme(w) ? `'${w}':` : undefined)));
  const rows: { start: number; words: string }[] = [];
  for (let start = 0; start < lines.length; start += STRIDE) {
    const end = Math.min(lines.length, start + WINDOW);
    let size = 0;
    for (let k = start; k < end; k++) size += lines[k]!.length;
    // Only a row of more than 256 words can hold a lexeme more than 256 times.
    const seen = size > MAX_POSITIONS_PER_WORD ? new Map<string, number>() : undefined;
    let words = '';
    let separator = '';
    let position = 0;
    for (let k = start; k < end && position < MAX_POSITION; k++) {
      const suffixes = SUFFIXES[k - start]!;
      const lexemes = quoted[k]!;
      for (let j = 0; j < lexemes.length; j++) {
        if (position === MAX_POSITION) break;
        position++;
        const lexeme = lexemes[j];
        if (lexeme === undefined) continue;
        if (seen) {
          // PostgreSQL keeps the first 256 positions of a lexeme; later ones need not be sent.
          const count = (seen.get(lexeme) ?? 0) + 1;
          seen.set(lexeme, count);
          if (count > MAX_POSITIONS_PER_WORD) continue;
        }
        words += `${separator}${lexeme}${suffixes[position] ?? `${position}${WEIGHTS[k - start]}`}`;
        separator = ' ';
      }
      // A gap between lines, so a quoted phrase never runs from one line into the next.
      if (position < MAX_POSITION) position++;
    }
    rows.push({ start, words });
  }
  return rows;
}

// A UTF-16 code unit is at most 3 UTF-8 bytes, so only long words need measuring.
const fitsLexeme = (word: string) =>
  word.length * 3 <= MAX_WORD_BYTES || Buffer.byteLength(word) <= MAX_WORD_BYTES;

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
