import type { StoredLine } from '../transcripts/projection.ts';

/**
 * Semantic passages (docs/semantic-search.md, "Passages"): consecutive windows of PASSAGE_LINES
 * transcript lines, the last one shorter. Each is embedded as one text.
 */
export const PASSAGE_LINES = 5;
/** Characters of a passage sent to the provider; the rest is cut (a run-on line stays one passage). */
const MAX_CHARS = 2000;

export interface Passage {
  start: number;
  lines: number;
  text: string;
}

export function passagesOf(lines: readonly StoredLine[]): Passage[] {
  const passages: Passage[] = [];
  for (let start = 0; start < lines.length; start += PASSAGE_LINES) {
    const window = lines.slice(start, start + PASSAGE_LINES);
    const text = window
      .map((line) => line.text)
      .join('\n')
      .slice(0, MAX_CHARS);
    passages.push({ start, lines: window.length, text });
  }
  return passages;
}
