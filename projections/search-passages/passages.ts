import { ASCII_FOLD, foldWords, isAscii } from '../../src/matching/engine/text-folding.ts';

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

/** `rowVectorsBinary` of the lines' texts folded (foldedLines), without a string per word of an ASCII line. */
export const textRowVectorsBinary = (texts: readonly string[]) => episodeRows(texts, binary);

/** `rowVectors` of the lines' texts folded (foldedLines), as textRowVectorsBinary reads them. */
export const textRowVectors = (texts: readonly string[]) => episodeRows(texts, literal);

/** A row's words: its lexemes in PostgreSQL's order, each with its positions ascending. */
interface RowWords {
  /** The episode's lexemes in PostgreSQL's order (a lexeme's rank is its index). */
  lexemes: readonly string[];
  /** The ranks of the row's lexemes, ascending. */
  ranks: Int32Array;
  /** Where each lexeme's positions start in `positions`, and a last entry at its end. */
  bounds: Int32Array;
  positions: Uint16Array;
}

/** An episode's indexed words: each line's as word ids with their offsets in the line, one token each. */
interface EpisodeWords {
  /** The distinct words, by id (first appearance). */
  words: WordIds;
  ids: Int32Array;
  offsets: Int32Array;
  /** Where each line's tokens start, and a last entry at the end. */
  lineStart: Int32Array;
  /** Per line holding a word more than POSITIONS_PER_LINE times, those words' ids. */
  frequent?: Map<number, Set<number>>;
}

function episodeRows<T>(
  lines: readonly (string | readonly string[])[],
  encoder: (lexemes: readonly string[]) => (row: RowWords) => T,
): { start: number; words: T }[] {
  const episode = episodeWords(lines);
  const { ids, offsets, lineStart } = episode;
  const { lexemes, rank } = lexemeOrder(episode.words.words);
  const encode = encoder(lexemes);
  const rows: { start: number; words: T }[] = [];
  // Scratch space of one row, reused: its tokens' ranks and positions, the ranks it holds, the
  // positions per rank (seen in row `seenIn`) and where the next one goes.
  const most = ROW_LINES * WORDS_PER_LINE;
  const tokenRank = new Int32Array(most);
  const tokenPosition = new Uint16Array(most);
  const ranks = new Int32Array(most);
  const bounds = new Int32Array(most + 1);
  const positions = new Uint16Array(most);
  const count = new Int32Array(lexemes.length);
  const seenIn = new Int32Array(lexemes.length);
  const next = new Int32Array(lexemes.length);
  // A row starts at every STRIDE-th line, so each line is one of the first STRIDE lines of exactly one row.
  for (let start = 0, row = 1; start < lines.length; start += STRIDE, row++) {
    const end = Math.min(lines.length, start + ROW_LINES);
    const caps = rowCaps(episode, start, end);
    const used = caps && new Map<number, number>();
    let tokens = 0;
    let distinct = 0;
    for (let k = start; k < end; k++) {
      const base = (k - start) * LINE_SLOT + 1;
      used?.clear();
      for (let t = lineStart[k]!; t < lineStart[k + 1]!; t++) {
        const id = ids[t]!;
        const cap = caps?.get(id);
        if (cap !== undefined && used) {
          const n = (used.get(id) ?? 0) + 1;
          used.set(id, n);
          if (n > cap) continue;
        }
        const r = rank[id]!;
        if (seenIn[r] !== row) {
          seenIn[r] = row;
          count[r] = 0;
          ranks[distinct++] = r;
        }
        count[r]!++;
        tokenRank[tokens] = r;
        tokenPosition[tokens++] = base + offsets[t]!;
      }
    }
    // Each lexeme's positions in line order, which is position order.
    const rowRanks = ranks.subarray(0, distinct).sort();
    let at = 0;
    for (let g = 0; g < distinct; g++) {
      const r = rowRanks[g]!;
      bounds[g] = at;
      next[r] = at;
      at += count[r]!;
    }
    bounds[distinct] = at;
    for (let i = 0; i < tokens; i++) positions[next[tokenRank[i]!]!++] = tokenPosition[i]!;
    const words = { lexemes, ranks: rowRanks, bounds: bounds.subarray(0, distinct + 1), positions };
    rows.push({ start, words: encode(withinBudget(words)) });
  }
  return rows;
}

function literal(lexemes: readonly string[]) {
  const quoted = lexemes.map((word) => `'${word}':`);
  return (row: RowWords): string => {
    const parts: string[] = [];
    for (let g = 0; g < row.ranks.length; g++) {
      let part = quoted[row.ranks[g]!]!;
      for (let i = row.bounds[g]!; i < row.bounds[g + 1]!; i++)
        part += `${i > row.bounds[g]! ? ',' : ''}${row.positions[i]!}`;
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
  return (row: RowWords): Buffer => {
    const groups = row.ranks.length;
    let size = 4 + 2 * row.bounds[groups]!;
    for (let g = 0; g < groups; g++) size += from[row.ranks[g]! + 1]! - from[row.ranks[g]!]! + 2;
    const out = Buffer.allocUnsafe(size);
    let at = out.writeInt32BE(groups, 0);
    for (let g = 0; g < groups; g++) {
      const k = row.ranks[g]!;
      for (let i = from[k]!; i < from[k + 1]!; i++) out[at++] = utf8[i]!;
      const count = row.bounds[g + 1]! - row.bounds[g]!;
      out[at++] = count >> 8;
      out[at++] = count & 0xff;
      for (let i = row.bounds[g]!; i < row.bounds[g + 1]!; i++) {
        const position = row.positions[i]!;
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
function withinBudget(row: RowWords): RowWords {
  const groups = row.ranks.length;
  // The lexeme, a WordEntry, alignment, the position count and two bytes a position.
  const bytes = (g: number, measure: (word: string) => number) =>
    measure(row.lexemes[row.ranks[g]!]!) + 8 + 2 * (row.bounds[g + 1]! - row.bounds[g]!);
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
  const ranks: number[] = [];
  const bounds = [0];
  const positions: number[] = [];
  for (let g = 0; g < groups; g++) {
    if (dropped.has(g)) continue;
    ranks.push(row.ranks[g]!);
    for (let i = row.bounds[g]!; i < row.bounds[g + 1]!; i++) positions.push(row.positions[i]!);
    bounds.push(positions.length);
  }
  return {
    lexemes: row.lexemes,
    ranks: Int32Array.from(ranks),
    bounds: Int32Array.from(bounds),
    positions: Uint16Array.from(positions),
  };
}

/**
 * The words in PostgreSQL's order (their UTF-8 bytes), so a row's lexemes sort as numbers, and the
 * rank of each word id in it. Words of ASCII letters and digits only (the common case) sort as
 * numbers holding their first PREFIX letters and their id, the few with the same first letters
 * then as strings; others sort as strings.
 */
function lexemeOrder(words: readonly string[]): { lexemes: string[]; rank: Int32Array } {
  const rank = new Int32Array(words.length);
  const keys = words.length <= ID_MASK + 1 ? prefixKeys(words) : undefined;
  if (keys === undefined) {
    // JavaScript's order is UTF-8's without code units from U+D800 up, where UTF-16 puts astral
    // letters before U+E000 … U+FFFF and UTF-8 after.
    const lexemes = [...words];
    lexemes.sort(lexemes.some((word) => HIGH_UNITS.test(word)) ? utf8Order : undefined);
    const id = new Map(words.map((word, k) => [word, k]));
    lexemes.forEach((word, k) => {
      rank[id.get(word)!] = k;
    });
    return { lexemes, rank };
  }
  keys.sort();
  const order = new Int32Array(words.length);
  for (let k = 0; k < keys.length; k++) order[k] = keys[k]! % (ID_MASK + 1);
  // Runs of words with the same first PREFIX letters, in string order.
  for (let from = 0; from < keys.length; ) {
    const prefix = Math.floor(keys[from]! / (ID_MASK + 1));
    let to = from + 1;
    while (to < keys.length && Math.floor(keys[to]! / (ID_MASK + 1)) === prefix) to++;
    if (to - from > 1) order.subarray(from, to).sort((a, b) => (words[a]! < words[b]! ? -1 : 1));
    from = to;
  }
  const lexemes = new Array<string>(words.length);
  for (let k = 0; k < order.length; k++) {
    lexemes[k] = words[order[k]!]!;
    rank[order[k]!] = k;
  }
  return { lexemes, rank };
}

// A word's first PREFIX code units (0 past its end, 1–36 for 0–9 and a–z: their order) in base 37,
// times 2^16, plus its id: exact in a double (37^7 · 2^16 < 2^53).
const PREFIX = 7;
const ID_MASK = 0xffff;
const DIGIT = new Int8Array(128).fill(-1);
for (let c = 0; c < 10; c++) DIGIT[48 + c] = 1 + c;
for (let c = 0; c < 26; c++) DIGIT[97 + c] = 11 + c;

/** Each word's sort key (above), or undefined when a word holds anything but ASCII letters and digits. */
function prefixKeys(words: readonly string[]): Float64Array | undefined {
  const keys = new Float64Array(words.length);
  for (let id = 0; id < words.length; id++) {
    const word = words[id]!;
    let key = 0;
    for (let i = 0; i < word.length; i++) {
      const code = word.charCodeAt(i);
      const digit = code < 128 ? DIGIT[code]! : -1;
      if (digit < 0) return undefined;
      if (i < PREFIX) key = key * 37 + digit;
    }
    for (let i = word.length; i < PREFIX; i++) key *= 37;
    keys[id] = key * (ID_MASK + 1) + id;
  }
  return keys;
}

const HIGH_UNITS = /[\ud800-\uffff]/;
const utf8Order = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * Per line, how many positions a word held more than 256 times in the row may keep: each line its
 * first n, n as large as fits in 256 (at least POSITIONS_PER_LINE). Undefined when no word needs it.
 */
function rowCaps(episode: EpisodeWords, start: number, end: number): Map<number, number> | undefined {
  if (!episode.frequent) return undefined;
  const counts = new Map<number, number[]>();
  for (let k = start; k < end; k++) for (const id of episode.frequent.get(k) ?? []) counts.set(id, []);
  if (counts.size === 0) return undefined;
  for (let k = start; k < end; k++) {
    const inLine = new Map<number, number>();
    for (let t = episode.lineStart[k]!; t < episode.lineStart[k + 1]!; t++) {
      const id = episode.ids[t]!;
      if (counts.has(id)) inLine.set(id, (inLine.get(id) ?? 0) + 1);
    }
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

/**
 * Each line's indexed words (their ids) and offsets: WORDS_PER_LINE words, 256 positions of each.
 * A line is its folded words, or its text, folded here as foldWords folds it: an ASCII text is
 * scanned and its words interned without a string per word (docs/search.md, "Where the targets stand").
 */
function episodeWords(given: readonly (string | readonly string[])[]): EpisodeWords {
  // Other text is folded first: one code unit can fold to several words ("ﷺ" to four).
  const lines = given.map((line) => (typeof line === 'string' && !isAscii(line) ? foldWords(line) : line));
  let most = 0;
  // An ASCII text of n code units holds at most (n + 1) / 2 words.
  for (const line of lines)
    most += Math.min(typeof line === 'string' ? (line.length + 1) >> 1 : line.length, WORDS_PER_LINE);
  const words = new WordIds();
  const episode: EpisodeWords = {
    words,
    ids: new Int32Array(most),
    offsets: new Int32Array(most),
    lineStart: new Int32Array(lines.length + 1),
  };
  // A word's count in the line being read (line k + 1 in `countedIn`). A line of at most
  // POSITIONS_PER_LINE words never holds a word more often: counting it changes nothing.
  const inLine = new Int32Array(most);
  const countedIn = new Int32Array(most);
  let t = 0;
  /** Adds word `id` at `offset` of line k. */
  const add = (id: number, k: number, offset: number) => {
    if (countedIn[id] !== k + 1) {
      countedIn[id] = k + 1;
      inLine[id] = 0;
    }
    const n = ++inLine[id]!;
    if (n > MAX_POSITIONS) return;
    if (n > POSITIONS_PER_LINE) {
      episode.frequent ??= new Map();
      const frequent = episode.frequent.get(k) ?? new Set<number>();
      episode.frequent.set(k, frequent.add(id));
    }
    episode.ids[t] = id;
    episode.offsets[t++] = offset;
  };
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k]!;
    if (typeof line === 'string') {
      // The words of an ASCII line: runs of ASCII_FOLD code units, hashed as they are read.
      let offset = 0;
      let from = -1;
      let hash = 0;
      for (let i = 0; i <= line.length && offset < WORDS_PER_LINE; i++) {
        const folded = i < line.length ? ASCII_FOLD[line.charCodeAt(i)]! : 0;
        if (folded !== 0) {
          if (from < 0) {
            from = i;
            hash = HASH_SEED;
          }
          hash = Math.imul(hash ^ folded, HASH_PRIME);
        } else if (from >= 0) {
          if (i - from <= MAX_WORD_BYTES) add(words.ofAscii(line, from, i, hash), k, offset);
          offset++;
          from = -1;
        }
      }
    } else {
      const count = Math.min(line.length, WORDS_PER_LINE);
      for (let offset = 0; offset < count; offset++) {
        const word = line[offset]!;
        if (fitsLexeme(word)) add(words.of(word), k, offset);
      }
    }
    episode.lineStart[k + 1] = t;
  }
  return episode;
}

// FNV-1a over a folded word's UTF-16 code units.
const HASH_SEED = 0x811c9dc5 | 0;
const HASH_PRIME = 0x01000193;

/** The distinct words of an episode, by id (first appearance), in an open-addressing table of their hashes. */
class WordIds {
  readonly words: string[] = [];
  private hashes = new Int32Array(1024);
  // Each slot holds a word's id + 1, 0 when empty; at most half of them are used.
  private slots = new Int32Array(2048);

  /** The id of `word`, a new one when it is new. */
  of(word: string): number {
    let hash = HASH_SEED;
    for (let i = 0; i < word.length; i++) hash = Math.imul(hash ^ word.charCodeAt(i), HASH_PRIME);
    const mask = this.slots.length - 1;
    for (let s = hash & mask; ; s = (s + 1) & mask) {
      const id = this.slots[s]! - 1;
      if (id < 0) return this.add(word, hash, s);
      if (this.hashes[id] === hash && this.words[id] === word) return id;
    }
  }

  /** The id of the ASCII word text[from, to) lower-cased, whose folded code units hash to `hash`. */
  ofAscii(text: string, from: number, to: number, hash: number): number {
    const mask = this.slots.length - 1;
    for (let s = hash & mask; ; s = (s + 1) & mask) {
      const id = this.slots[s]! - 1;
      if (id < 0) return this.add(text.slice(from, to).toLowerCase(), hash, s);
      if (this.hashes[id] === hash && sameFolded(this.words[id]!, text, from, to)) return id;
    }
  }

  private add(word: string, hash: number, slot: number): number {
    const id = this.words.length;
    this.words.push(word);
    if (id === this.hashes.length) {
      const hashes = new Int32Array(2 * id);
      hashes.set(this.hashes);
      this.hashes = hashes;
    }
    this.hashes[id] = hash;
    this.slots[slot] = id + 1;
    if (2 * this.words.length > this.slots.length) this.grow();
    return id;
  }

  private grow() {
    const slots = new Int32Array(2 * this.slots.length);
    const mask = slots.length - 1;
    for (let id = 0; id < this.words.length; id++) {
      let s = this.hashes[id]! & mask;
      while (slots[s] !== 0) s = (s + 1) & mask;
      slots[s] = id + 1;
    }
    this.slots = slots;
  }
}

/** Whether `word` is the ASCII text[from, to) folded. */
function sameFolded(word: string, text: string, from: number, to: number): boolean {
  if (word.length !== to - from) return false;
  for (let i = from; i < to; i++)
    if (ASCII_FOLD[text.charCodeAt(i)] !== word.charCodeAt(i - from)) return false;
  return true;
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

/** Words of a phrase checked one parameter a word; a longer phrase binds them as one array. */
const LISTED_PHRASE_WORDS = 8;

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
  // A phrase: a position of its first word followed by each next word at the next position. A long
  // one (an entity's name may fold to hundreds of words) binds its next words as one array: a
  // parameter a word would pass PostgreSQL's 65,535 parameters a statement.
  const follows =
    term.length > LISTED_PHRASE_WORDS
      ? `not exists (select from unnest(${params.p(term.slice(1), 'text[]')}) with ordinality w(lexeme, k)
                      where not exists (select from f g where g.lexeme = w.lexeme and p + k::int = any(g.positions)))`
      : term
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
