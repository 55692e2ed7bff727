import { PASSAGE_LINES, type Term } from '../../projections/search-passages/passages.ts';
import { BadRequestError } from '../errors.ts';
import { foldWords } from '../matching/engine/text-folding.ts';

/** Terms per keyword_search (docs/search.md). */
export const MAX_TERMS = 32;

/**
 * The terms of keyword_search: each quoted phrase is one term (its folded words, in order), every
 * other word a term of its own; folded like the matcher's names, duplicates dropped.
 */
export function parseKeywords(input: string): Term[] {
  const terms = new Map<string, Term>();
  const add = (words: string[]) => {
    if (words.length > 0) terms.set(words.join(' '), words);
  };
  const parts = input.split('"');
  // Even parts lie outside quotes; an unclosed quote leaves its tail as plain words.
  const closed = parts.length % 2 === 1 ? parts.length : parts.length - 1;
  parts.forEach((part, i) => {
    if (i % 2 === 1 && i < closed) add(foldWords(part));
    else for (const word of foldWords(part)) add([word]);
  });
  if (terms.size === 0)
    throw new BadRequestError('invalid_parameter', 'keyword_search has no word to search for.', [
      { location: 'query.keyword_search', message: 'contains no letter or digit', value: input },
    ]);
  if (terms.size > MAX_TERMS)
    throw new BadRequestError('invalid_parameter', `keyword_search takes at most ${MAX_TERMS} terms.`, [
      { location: 'query.keyword_search', message: `has ${terms.size} terms`, value: input },
    ]);
  return [...terms.values()];
}

function occursIn(words: readonly string[], term: Term): boolean {
  outer: for (let i = 0; i + term.length <= words.length; i++) {
    for (let k = 0; k < term.length; k++) if (words[i + k] !== term[k]) continue outer;
    return true;
  }
  return false;
}

/**
 * The lines (positions) that match inside the passages found (`starts`: each passage's first line;
 * a passage spans PASSAGE_LINES lines). With `all`, the lines holding a term in a passage that holds
 * every term; otherwise the passage's lines holding any term. `words(i)` gives line i's folded
 * words; lines outside the passages are never read.
 */
export function matchingLines(
  count: number,
  words: (index: number) => readonly string[],
  terms: readonly Term[],
  all: boolean,
  starts: readonly number[],
): number[] {
  const held = new Map<number, boolean[]>();
  const heldAt = (i: number) => {
    let flags = held.get(i);
    if (flags === undefined) {
      const lineWords = words(i);
      flags = terms.map((term) => occursIn(lineWords, term));
      held.set(i, flags);
    }
    return flags;
  };
  const marked = new Set<number>();
  for (const first of starts) {
    if (first >= count) continue;
    const end = Math.min(count, first + PASSAGE_LINES);
    const covered =
      !all ||
      terms.every((_, t) => {
        for (let k = first; k < end; k++) if (heldAt(k)[t]) return true;
        return false;
      });
    if (covered) for (let k = first; k < end; k++) if (heldAt(k).some(Boolean)) marked.add(k);
  }
  return [...marked].sort((a, b) => a - b);
}
