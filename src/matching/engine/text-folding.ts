/**
 * Text folding for mention detection. One rule, applied code point by code point, so that names
 * and transcripts fold identically and the scanner never needs to build a folded copy:
 *
 *   NFKD → drop combining marks (\p{M}) → lowercase → final sigma ς as σ →
 *   every character that is not a Unicode letter or digit becomes a word separator.
 *
 * A word is a maximal run of letters and digits; combining marks inside it are dropped without
 * splitting it ("Zoe\u0308" is the word "zoe"). Folding code point by code point equals folding
 * the whole string (NFKD decomposes per character, and canonical reordering only moves marks,
 * which are dropped), except for context-sensitive lowercasing, which is why ς folds to σ.
 */
const WORD_CHAR = /^[\p{L}\p{N}]$/u;
const NON_ASCII = /[^\p{ASCII}]/u;
const ASCII_SEPARATORS = /[^a-z0-9]+/;
const MARKS = /\p{M}/gu;

/** The reference folding of a whole string (marks dropped, lowercase), separators kept as they are. */
export function normaliseText(text: string): string {
  return text.normalize('NFKD').replace(MARKS, '').toLowerCase().replaceAll('ς', 'σ');
}

/** The folding of one code point, with each non-word character replaced by a space. */
export function foldCodePoint(codePoint: number): string {
  let out = '';
  for (const ch of normaliseText(String.fromCodePoint(codePoint))) out += WORD_CHAR.test(ch) ? ch : ' ';
  return out;
}

/** FOLD[codeUnit] for the scanner: > 0 the folded word code unit, else one of these markers. */
export const SEPARATOR = 0;
export const UNKNOWN = -1;
export const IGNORED = -2;
export const EXPANDS = -3;
export const SURROGATE = -4;

export const FOLD = new Int32Array(0x10000).fill(UNKNOWN);
/** Folded strings of BMP code units marked EXPANDS (more than one code unit, or mixed words/separators). */
export const EXPANSIONS = new Map<number, string>();
const ASTRAL = new Map<number, string>();

/** Fills FOLD for one BMP code unit; the scanner calls it the first time it meets a character. */
export function classifyCodeUnit(codeUnit: number): void {
  if (codeUnit >= 0xd800 && codeUnit <= 0xdfff) {
    FOLD[codeUnit] = SURROGATE;
    return;
  }
  const folded = foldCodePoint(codeUnit);
  if (folded.length === 0) FOLD[codeUnit] = IGNORED;
  else if (folded.trim().length === 0) FOLD[codeUnit] = SEPARATOR;
  else if (folded.length === 1) FOLD[codeUnit] = folded.charCodeAt(0);
  else {
    EXPANSIONS.set(codeUnit, folded);
    FOLD[codeUnit] = EXPANDS;
  }
}

export function foldAstral(codePoint: number): string {
  let folded = ASTRAL.get(codePoint);
  if (folded === undefined) {
    folded = foldCodePoint(codePoint);
    ASTRAL.set(codePoint, folded);
  }
  return folded;
}

for (let c = 0; c < 0x250; c++) classifyCodeUnit(c);

/**
 * Folding of ASCII text, as foldWords' ASCII path folds it: the folded code unit of each ASCII code
 * unit of a word (a–z, 0–9, A–Z lower-cased), 0 for a separator (every other one).
 */
export const ASCII_FOLD = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c).toLowerCase();
  if (!ASCII_SEPARATORS.test(ch)) ASCII_FOLD[c] = ch.charCodeAt(0);
}

/** Whether foldWords folds `text` through its ASCII path (ASCII_FOLD). */
export const isAscii = (text: string) => !NON_ASCII.test(text);

/** The folded words of a name or text, in order: "O'Brien" → ["o", "brien"], "Zoë" → ["zoe"]. */
export function foldWords(text: string): string[] {
  // ASCII folds to its lowercase letters and digits, the rest separators: a regex does it faster.
  if (isAscii(text))
    return text
      .toLowerCase()
      .split(ASCII_SEPARATORS)
      .filter((word) => word.length > 0);
  let folded = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp > 0xffff) folded += foldAstral(cp);
    else {
      if (FOLD[cp] === UNKNOWN) classifyCodeUnit(cp);
      const f = FOLD[cp]!;
      if (f > 0) folded += String.fromCharCode(f);
      else if (f === SEPARATOR || f === SURROGATE) folded += ' ';
      else if (f === EXPANDS) folded += EXPANSIONS.get(cp)!;
    }
  }
  return folded.split(' ').filter((word) => word.length > 0);
}
