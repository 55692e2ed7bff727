import { foldWords } from '../../src/matching/engine/text-folding.ts';

/**
 * The passage index's layout (docs/search.md, "Index design"). A passage is at most PASSAGE_LINES
 * consecutive lines. Rows hold ROW_LINES lines starting at every STRIDE-th line, so every run of
 * PASSAGE_LINES lines lies inside one row: a passage starting at line s belongs to the row starting
 * at s - s % STRIDE, and each line is one of the first STRIDE lines (its own lines) of exactly one
 * row, so per-line counts read only those. Positions are aligned on lines: line k of a row holds positions
 * k·LINE_SLOT + 1 … k·LINE_SLOT + LINE_SLOT − 1, so the line of position p is (p − 1) / LINE_SLOT
 * and a phrase (`a <-> b`) never spans two lines.
 */
export const PASSAGE_LINES = 5;
export const ROW_LINES = 24;
export const STRIDE = ROW_LINES - PASSAGE_LINES + 1;
// PostgreSQL keeps positions up to 16383: 24 slots of 682 end at 16367.
export const LINE_SLOT = Math.floor(16383 / ROW_LINES);
/** Words of a line that are indexed: the rest of a longer line is not. */
export const WORDS_PER_LINE = LINE_SLOT - 1;
// PostgreSQL keeps a lexeme's first 256 positions and drops the rest silently.
const MAX_POSITIONS = 256;
/** A word this often in every line of a row still fits PostgreSQL's 256 positions: 24 × 10. */
export const POSITIONS_PER_LINE = Math.floor(MAX_POSITIONS / ROW_LINES);
const MAX_WORD_BYTES = 2046;
/** Bits of a row's own passage starts (0 … STRIDE − 1) in a passage mask. */
export const STARTS_MASK = (1 << STRIDE) - 1;

/** A search term: one folded word, or the folded words of a quoted phrase. */
export type Term = readonly string[];

/** The folded words of each line, in line order. */
export const foldedLines = (texts: readonly string[]): string[][] => texts.map(foldWords);

/**
 * The rows of an episode: the first line of each and its tsvector literal. Each lexeme is listed
 * once, its positions ascending, the lexemes in PostgreSQL's order, so PostgreSQL has nothing to
 * merge and its sort on input finds them in order (the same value as one entry per occurrence).
 */
export const rowVectors = (lines: readonly (readonly string[])[]) => episodeRows(lines, literal);

/**
 * The same rows as `rowVectors`, each tsvector in PostgreSQL's binary form (tsvectorrecv: the
 * lexeme count, then each lexeme, a zero byte, its position count and positions as 16-bit
 * integers): PostgreSQL reads it five times faster than the literal (docs/search.md,
 * "Where the targets stand").
 */
export const rowVectorsBinary = (lines: readonly (readonly string[])[]) => episodeRows(lines, binary);

/** A row's lexemes in PostgreSQL's order: `keys` sorted (rank · POSITION_SPAN + position), each rank a lexeme. */
interface RowKeys {
  lexemes: readonly string[];
  keys: Float64Array;
  /** Where each lexeme's keys start in `keys`, and a last entry at its end. */
  bounds: number[];
}

function episodeRows<T>(
  lines: readonly (readonly string[])[],
  encoder: (lexemes: readonly string[]) => (row: RowKeys) => T,
): { start: number; words: T }[] {
  // Each line's words as ids (an id per distinct word of the episode) with their offsets in the line.
  const ids = new Map<string, number>();
  const entries = lines.map((words) => lineEntries(words, ids));
  // The lexemes in PostgreSQL's order (their UTF-8 bytes): a row's (rank, position) pairs then
  // sort as numbers. JavaScript's order is the same without code units from U+D800 up, where UTF-16
  // puts astral letters before U+E000 … U+FFFF and UTF-8 after.
  const lexemes = [...ids.keys()];
  lexemes.sort(lexemes.some((word) => HIGH_UNITS.test(word)) ? utf8Order : undefined);
  const rank = new Int32Array(lexemes.length);
  lexemes.forEach((word, k) => {
    rank[ids.get(word)!] = k;
  });
  const encode = encoder(lexemes);
  const rows: { start: number; words: T }[] = [];
  const keys = new Float64Array(ROW_LINES * WORDS_PER_LINE);
  // A row starts at every STRIDE-th line, so each line is one of the first STRIDE lines of exactly one row.
  for (let start = 0; start < lines.length; start += STRIDE) {
    let count = 0;
    const end = Math.min(lines.length, start + ROW_LINES);
    const caps = rowCaps(entries.slice(start, end));
    const used = caps && new Map<number, number>();
    for (let k = start; k < end; k++) {
      const base = (k - start) * LINE_SLOT + 1;
      const line = entries[k]!;
      used?.clear();
      for (let i = 0; i < line.ids.length; i++) {
        const id = line.ids[i]!;
        const cap = caps?.get(id);
        if (cap !== undefined && used) {
          const n = (used.get(id) ?? 0) + 1;
          used.set(id, n);
          if (n > cap) continue;
        }
        keys[count++] = rank[id]! * POSITION_SPAN + base + line.offsets[i]!;
      }
    }
    const sorted = keys.subarray(0, count).sort();
    rows.push({
      start,
      words: encode(withinBudget({ lexemes, keys: sorted, bounds: lexemeBounds(sorted) })),
    });
  }
  return rows;
}

const lexemeOf = (row: RowKeys, g: number) => Math.floor(row.keys[row.bounds[g]!]! / POSITION_SPAN);

function literal(lexemes: readonly string[]) {
  const quoted = lexemes.map((word) => `'${word}':`);
  return (row: RowKeys): string => {
    const parts: string[] = [];
    for (let g = 0; g + 1 < row.bounds.length; g++) {
      const k = lexemeOf(row, g);
      let part = quoted[k]!;
      for (let i = row.bounds[g]!; i < row.bounds[g + 1]!; i++)
        part += `${i > row.bounds[g]! ? ',' : ''}${row.keys[i]! - k * POSITION_SPAN}`;
      parts.push(part);
    }
    return parts.join(' ');
  };
}

function binary(lexemes: readonly string[]) {
  // Every lexeme's UTF-8 bytes and the zero byte ending it, as tsvectorrecv reads them (folded
  // words hold no zero), encoded once per episode.
  const utf8 = Buffer.from(`${lexemes.join('\0')}\0`);
  const from = new Int32Array(lexemes.length + 1);
  for (let i = 0, k = 1; i < utf8.length; i++) if (utf8[i] === 0) from[k++] = i + 1;
  return (row: RowKeys): Buffer => {
    const groups = row.bounds.length - 1;
    let size = 4 + 2 * row.keys.length;
    for (let g = 0; g < groups; g++) {
      const k = lexemeOf(row, g);
      size += from[k + 1]! - from[k]! + 2;
    }
    const out = Buffer.allocUnsafe(size);
    let at = out.writeInt32BE(groups, 0);
    for (let g = 0; g < groups; g++) {
      const k = lexemeOf(row, g);
      for (let i = from[k]!; i < from[k + 1]!; i++) out[at++] = utf8[i]!;
      const count = row.bounds[g + 1]! - row.bounds[g]!;
      out[at++] = count >> 8;
      out[at++] = count & 0xff;
      for (let i = row.bounds[g]!; i < row.bounds[g + 1]!; i++) {
        const position = row.keys[i]! - k * POSITION_SPAN;
        out[at++] = position >> 8;
        out[at++] = position & 0xff;
      }
    }
    return out;
  };
}

// PostgreSQL refuses a tsvector whose lexemes and positions pass 1 MB (MAXSTRPOS).
const VECTOR_BUDGET = 1_000_000;

/**
 * A row's lexemes that fit one tsvector: when they would not, the longest lexemes are left out
 * (only a row of thousands of very long "words" gets there). A lexeme is at most three bytes a
 * UTF-16 code unit, so most rows need no measuring.
 */
function withinBudget(row: RowKeys): RowKeys {
  const groups = row.bounds.length - 1;
  // The lexeme, a WordEntry, alignment, the position count and two bytes a position.
  const bytes = (g: number, measure: (word: string) => number) =>
    measure(row.lexemes[lexemeOf(row, g)]!) + 8 + 2 * (row.bounds[g + 1]! - row.bounds[g]!);
  let bound = 0;
  for (let g = 0; g < groups; g++) bound += bytes(g, (word) => word.length * 3);
  if (bound <= VECTOR_BUDGET) return row;
  const sized = Array.from({ length: groups }, (_, g) => ({ g, bytes: bytes(g, Buffer.byteLength) }));
  let total = sized.reduce((sum, entry) => sum + entry.bytes, 0);
  const dropped = new Set<number>();
  for (const entry of [...sized].sort((a, b) => b.bytes - a.bytes)) {
    if (total <= VECTOR_BUDGET) break;
    dropped.add(entry.g);
    total -= entry.bytes;
  }
  if (dropped.size === 0) return row;
  const kept: number[] = [];
  for (let g = 0; g < groups; g++)
    if (!dropped.has(g)) for (let i = row.bounds[g]!; i < row.bounds[g + 1]!; i++) kept.push(row.keys[i]!);
  const keys = Float64Array.from(kept);
  return { lexemes: row.lexemes, keys, bounds: lexemeBounds(keys) };
}

function lexemeBounds(keys: Float64Array): number[] {
  const bounds: number[] = [];
  let last = -1;
  for (let i = 0; i < keys.length; i++) {
    const k = Math.floor(keys[i]! / POSITION_SPAN);
    if (k !== last) bounds.push(i);
    last = k;
  }
  bounds.push(keys.length);
  return bounds;
}

const HIGH_UNITS = /[\ud800-\uffff]/;
const utf8Order = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

// Positions of a tsvector are below 2^14.
const POSITION_SPAN = 16384;

interface LineEntries {
  ids: number[];
  offsets: number[];
  /** Words held more than POSITIONS_PER_LINE times in the line. */
  frequent?: Set<number>;
}

/**
 * Per line, how many positions a word held more than 256 times in the row may keep: each line its
 * first n, n as large as fits in 256 (at least POSITIONS_PER_LINE). Undefined when no word needs it.
 */
function rowCaps(lines: readonly LineEntries[]): Map<number, number> | undefined {
  if (!lines.some((l) => l.frequent)) return undefined;
  const counts = new Map<number, number[]>();
  for (const line of lines) for (const id of line.frequent ?? []) counts.set(id, []);
  for (const line of lines) {
    const inLine = new Map<number, number>();
    for (const id of line.ids) if (counts.has(id)) inLine.set(id, (inLine.get(id) ?? 0) + 1);
    for (const [id, n] of inLine) counts.get(id)!.push(n);
  }
  const caps = new Map<number, number>();
  for (const [id, perLine] of counts) {
    const kept = (cap: number) => perLine.reduce((sum, n) => sum + Math.min(n, cap), 0);
    if (kept(MAX_POSITIONS) <= MAX_POSITIONS) continue;
    let cap = POSITIONS_PER_LINE;
    while (kept(cap + 1) <= MAX_POSITIONS) cap++;
    caps.set(id, cap);
  }
  return caps.size ? caps : undefined;
}

/** A line's indexed words (their ids in `ids`) and offsets: WORDS_PER_LINE words, 256 positions of each. */
function lineEntries(words: readonly string[], ids: Map<string, number>): LineEntries {
  const line: LineEntries = { ids: [], offsets: [] };
  // Only a line of more than POSITIONS_PER_LINE words can hold a word more often.
  const seen = words.length > POSITIONS_PER_LINE ? new Map<number, number>() : undefined;
  const frequent = new Set<number>();
  const count = Math.min(words.length, WORDS_PER_LINE);
  for (let offset = 0; offset < count; offset++) {
    const word = words[offset]!;
    let id = ids.get(word);
    if (id === undefined) {
      if (!fitsLexeme(word)) continue;
      id = ids.size;
      ids.set(word, id);
    }
    if (seen) {
      const n = (seen.get(id) ?? 0) + 1;
      seen.set(id, n);
      if (n > MAX_POSITIONS) continue;
      if (n > POSITIONS_PER_LINE) frequent.add(id);
    }
    line.ids.push(id);
    line.offsets.push(offset);
  }
  if (frequent.size) line.frequent = frequent;
  return line;
}

// A UTF-16 code unit is at most 3 UTF-8 bytes, so only long words need measuring.
const fitsLexeme = (word: string) =>
  word.length * 3 <= MAX_WORD_BYTES || Buffer.byteLength(word) <= MAX_WORD_BYTES;

// Folded words are letters and digits only, so quoting needs no escapes.
const termQuery = (term: Term) =>
  term.length === 1 ? `'${term[0]!}'` : `(${term.map((w) => `'${w}'`).join(' <-> ')})`;

/** Every term somewhere in the row (each phrase inside one line): the candidate rows of `all`. */
export const everyTerm = (terms: readonly Term[]) => terms.map(termQuery).join(' & ');

/** Any of the terms anywhere in the row. */
export const anyTerm = (terms: readonly Term[]) => terms.map(termQuery).join(' | ');

/** Binds a query parameter, giving its placeholder (src/catalog/sql.ts, Params). */
interface Binder {
  p(value: unknown, cast: string): string;
}

// Positions in SQL are smallints: the arithmetic is done in int.
const lineOf = (p: string) => `(1 << ((${p}::int - 1) / ${LINE_SLOT}))`;

/**
 * SQL: the lines (a bit per line of the row) of row `words` that hold the term. Only the term's own
 * lexemes are unpacked (marked with weight A, then filtered), so it costs little beside the scan.
 */
export function termLines(words: string, term: Term, params: Binder) {
  const found = `ts_filter(setweight(${words}, 'A', ${params.p([...new Set(term)], 'text[]')}), '{a}')`;
  if (term.length === 1)
    return `coalesce((select bit_or(${lineOf('p')}) from unnest(${found}) u, unnest(u.positions) p), 0)`;
  // A phrase: a position of its first word followed by each next word at the next position.
  const follows = term
    .slice(1)
    .map(
      (w, k) =>
        `exists (select from f g where g.lexeme = ${params.p(w, 'text')} and p + ${k + 1} = any(g.positions))`,
    )
    .join(' and ');
  return `coalesce((with f as (select lexeme, positions from unnest(${found}))
                    select bit_or(${lineOf('p')}) from f, unnest(f.positions) p
                     where f.lexeme = ${params.p(term[0], 'text')} and ${follows}), 0)`;
}

/**
 * SQL: the passages of the row that hold every term (`all`) or any term, as a bit per start
 * (0 … STRIDE − 1, the row's own passages). A passage starting at line s holds a term when the
 * term's lines meet lines s … s + 4: bit s of lines | lines >> 1 | … | lines >> 4.
 */
export function passageStarts(words: string, terms: readonly Term[], all: boolean, params: Binder) {
  const reach = (lines: string) =>
    `(${Array.from({ length: PASSAGE_LINES }, (_, k) => (k ? `(${lines} >> ${k})` : lines)).join(' | ')})`;
  // Each term's lines once (offset 0 keeps PostgreSQL from copying the subqueries into every use).
  const lines = terms.map((t, k) => `${termLines(words, t, params)} as t${k}`).join(', ');
  const starts = all
    ? terms.map((_, k) => reach(`l.t${k}`)).join(' & ')
    : reach(`(${terms.map((_, k) => `l.t${k}`).join(' | ')})`);
  return `(select (${starts}) & ${STARTS_MASK} from (select ${lines} offset 0) l)`;
}

/** The passage starts (line positions in the episode) of a row starting at `start` with passage mask `mask`. */
export function startsOf(start: number, mask: number): number[] {
  const starts: number[] = [];
  for (let s = 0; s < STRIDE; s++) if (mask & (1 << s)) starts.push(start + s);
  return starts;
}
