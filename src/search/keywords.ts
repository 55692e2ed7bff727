import { PASSAGE_LINES, type Term } from '../../projections/search-passages/passages.ts';
import { BadRequestError } from '../errors.ts';
import { foldWords } from '../matching/text-folding.ts';

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
 * The lines (indexes) that match: with `all`, the lines holding a term inside some run of at most
 * PASSAGE_LINES lines that holds every term; otherwise every line holding any term.
 */
export function matchingLines(lines: readonly (readonly string[])[], terms: readonly Term[], all: boolean) {
  const held = lines.map((words) => terms.map((term) => occursIn(words, term)));
  if (!all) return held.flatMap((flags, i) => (flags.some(Boolean) ? [i] : []));
  const marked = new Set<number>();
  for (let start = 0; start < lines.length; start++) {
    const end = Math.min(lines.length, start + PASSAGE_LINES);
    const covered = terms.every((_, t) => {
      for (let k = start; k < end; k++) if (held[k]![t]) return true;
      return false;
    });
    if (!covered) continue;
    for (let k = start; k < end; k++) if (held[k]!.some(Boolean)) marked.add(k);
  }
  return [...marked].sort((a, b) => a - b);
}
