/**
 * A search's fuzzy title matches, found and scored in memory (docs/catalog.md, "Title matches in
 * memory"). For titles and a `q` of plain characters (a–z, 0–9, single spaces) the trigrams are
 * pg_trgm's, and so are `similarity` and `word_similarity`, computed as pg_trgm computes them in
 * single precision: the matches and scores are those podcast_title_hits (migrations 0235, 0268)
 * gives. Titles of other characters are left to it: which of them pg_trgm counts as letters depends
 * on the database's locale.
 */

/** pg_trgm.similarity_threshold and pg_trgm.word_similarity_threshold as podcast_title_hits sets them. */
const SIMILARITY = 0.4;
const WORD_SIMILARITY = 0.6;
/**
 * Past this many titles left to PostgreSQL, checking each by key costs about what the trigram
 * index does: searches go to it as before.
 */
const MAX_OTHERS = 200;
/** Slots of removed or changed titles kept before the postings are rebuilt. */
const MIN_COMPACTION = 1_024;

const PLAIN = /^[a-z0-9 ]*$/;

/**
 * The trigrams of a plain folded text in the order pg_trgm makes them (each word padded with two
 * spaces before and one after), repeats included; undefined for text that is not plain.
 */
export function trigramSequence(text: string): string[] | undefined {
  if (!PLAIN.test(text)) return undefined;
  const out: string[] = [];
  for (const word of text.split(' ')) {
    if (word === '') continue;
    const padded = `  ${word} `;
    for (let i = 0; i + 3 <= padded.length; i++) out.push(padded.slice(i, i + 3));
  }
  return out;
}

/** pg_trgm's CALCSML: a float4 quotient. */
const ratio = (count: number, len1: number, len2: number) => Math.fround(count / (len1 + len2 - count));

/** pg_trgm's `similarity(a, b)` of two distinct-trigram sets sharing `shared`. */
const similarity = (shared: number, len1: number, len2: number) =>
  len1 <= 0 || len2 <= 0 ? 0 : ratio(shared, len1, len2);

/** Marks and positions by trigram number, reused by every word similarity of a process. */
class Scratch {
  mark = new Int32Array(1024);
  lastpos = new Int32Array(1024);
  #generation = 0;

  /** A fresh mark, the arrays holding at least `size` trigram numbers. */
  next(size: number): number {
    if (this.mark.length < size) {
      this.mark = new Int32Array(size * 2);
      this.lastpos = new Int32Array(size * 2);
      this.#generation = 0;
    }
    if (this.#generation === 0x7fffffff) {
      this.mark.fill(0);
      this.#generation = 0;
    }
    return ++this.#generation;
  }
}

/**
 * pg_trgm's `word_similarity(a, b)` of two trigram sequences numbered alike, below `size`
 * (calc_word_similarity and iterate_word_similarity, not strict): the greatest similarity of a's
 * trigrams with an extent of b's, found as pg_trgm finds it.
 */
function wordSimilarityOf(a: Int32Array, b: Int32Array, size: number, scratch: Scratch): number {
  const found = scratch.next(size);
  const { mark, lastpos } = scratch;
  let ulen1 = 0;
  for (let i = 0; i < a.length; i++) {
    const t = a[i] as number;
    if (mark[t] !== found) {
      mark[t] = found;
      ulen1++;
    }
  }
  for (let i = 0; i < b.length; i++) lastpos[b[i] as number] = -1;
  let ulen2 = 0;
  let count = 0;
  let lower = -1;
  let max = 0;
  for (let i = 0; i < b.length; i++) {
    const t = b[i] as number;
    const inA = mark[t] === found;
    if (lower >= 0 || inA) {
      if ((lastpos[t] as number) < 0) {
        ulen2++;
        if (inA) count++;
      }
      lastpos[t] = i;
    }
    if (!inA) continue;
    const upper = i;
    if (lower === -1) {
      lower = i;
      ulen2 = 1;
    }
    let current = ratio(count, ulen1, ulen2);
    let tmpCount = count;
    let tmpUlen2 = ulen2;
    const previousLower = lower;
    for (let tmpLower = lower; tmpLower <= upper; tmpLower++) {
      const tmp = ratio(tmpCount, ulen1, tmpUlen2);
      if (tmp > current) {
        current = tmp;
        ulen2 = tmpUlen2;
        lower = tmpLower;
        count = tmpCount;
      }
      const at = b[tmpLower] as number;
      if (lastpos[at] === tmpLower) {
        tmpUlen2--;
        if (mark[at] === found) tmpCount--;
      }
    }
    max = Math.max(max, current);
    for (let tmpLower = previousLower; tmpLower < lower; tmpLower++) {
      const at = b[tmpLower] as number;
      if (lastpos[at] === tmpLower) lastpos[at] = -1;
    }
  }
  return max;
}

/** pg_trgm's `word_similarity(a, b)` of two trigram sequences (trigramSequence). */
export function wordSimilarity(a: readonly string[], b: readonly string[]): number {
  const numbers = new Postings();
  const na = Int32Array.from(a, (t) => numbers.add(t));
  const nb = Int32Array.from(b, (t) => numbers.add(t));
  return wordSimilarityOf(na, nb, numbers.size, new Scratch());
}

/** A search's words as podcast_title_hits takes them: the distinctive ones and all of q's distinct words. */
export interface TitleQuery {
  q: string;
  words: readonly string[];
  allWords: readonly string[];
}

/** Title matches as podcast_title_hits scores them (podcast_title_score), and the shows left to it. */
export interface TitleHits {
  ids: string[];
  qualities: ('exact' | 'prefix' | 'fuzzy')[];
  scores: number[];
  /** Shows whose titles are not plain: podcast_title_hits_among decides them. */
  others: string[];
}

/** Keys numbered in the order first seen, each with the slots listed under it. */
class Postings {
  readonly #numbers = new Map<string, number>();
  readonly lists: number[][] = [];

  get size() {
    return this.#numbers.size;
  }

  numberOf(key: string): number | undefined {
    return this.#numbers.get(key);
  }

  /** The key's number, numbering it (with an empty list) when new. */
  add(key: string): number {
    let n = this.#numbers.get(key);
    if (n === undefined) {
      n = this.#numbers.size;
      this.#numbers.set(key, n);
      this.lists.push([]);
    }
    return n;
  }
}

export class TitleTrigrams {
  #ids: string[] = [];
  #titles: string[] = [];
  /** Each slot's title as trigram numbers, in pg_trgm's order. */
  #sequences: Int32Array[] = [];
  /** Distinct trigrams of each slot's title. */
  #sizes: number[] = [];
  /** Each slot's distinct title words by number, and how many words it has with repeats (string_to_array). */
  #words: Int32Array[] = [];
  #wordCounts: number[] = [];
  /** Title words by number, and the slots holding each. */
  #byWord = new Postings();
  /** The query generation whose words (in q, distinctive) hold each word number. */
  #inQ = new Int32Array(0);
  #distinctive = new Int32Array(0);
  /** The query generation that last considered each slot. */
  #considered = new Int32Array(0);
  #generation = 0;
  #alive: boolean[] = [];
  #dead = 0;
  readonly #slotOf = new Map<string, number>();
  /** Trigrams by number, and the slots holding each. */
  #byTrigram = new Postings();
  readonly #other = new Set<string>();
  #counts = new Int32Array(0);
  readonly #scratch = new Scratch();

  /** Sets show `id`'s folded title (null: the show is gone or has none). */
  set(id: string, title: string | null): void {
    const slot = this.#slotOf.get(id);
    // most changes of a show leave its title as it was
    if (slot !== undefined && this.#titles[slot] === title) return;
    if (title !== null && this.#other.has(id) && !PLAIN.test(title)) return;
    if (slot !== undefined) {
      this.#alive[slot] = false;
      this.#slotOf.delete(id);
      this.#dead++;
    }
    this.#other.delete(id);
    if (title !== null) {
      const sequence = trigramSequence(title);
      if (sequence) this.#add(id, title, sequence);
      else this.#other.add(id);
    }
    if (this.#dead > MIN_COMPACTION && this.#dead > this.#slotOf.size) this.#compact();
  }

  /**
   * The shows podcast_title_hits finds for a plain `q` by title similarity either way round or by
   * shared words, with its qualities and scores (however many: the statement decides how many it
   * takes); undefined when q is not plain, or when the titles left to PostgreSQL are too many.
   */
  hits(query: TitleQuery): TitleHits | undefined {
    const q = query.q;
    const qText = trigramSequence(q);
    if (!qText || qText.length === 0 || this.#other.size > MAX_OTHERS) return undefined;
    // q's trigrams by number; those no title holds numbered past the titles'
    const extra = new Map<string, number>();
    const known = this.#byTrigram.size;
    const qSequence = Int32Array.from(qText, (t) => {
      let n = this.#byTrigram.numberOf(t) ?? extra.get(t);
      if (n === undefined) {
        n = known + extra.size;
        extra.set(t, n);
      }
      return n;
    });
    const numbered = known + extra.size;
    const distinct = [...new Set(qSequence)];
    const nq = distinct.length;
    if (this.#counts.length < this.#ids.length) {
      this.#counts = new Int32Array(this.#ids.length * 2);
      this.#considered = new Int32Array(this.#ids.length * 2);
    }
    if (this.#generation === 0x7fffffff) {
      this.#generation = 0;
      this.#considered.fill(0);
      this.#inQ.fill(0);
      this.#distinctive.fill(0);
    }
    const generation = ++this.#generation;
    const counts = this.#counts;
    const touched: number[] = [];
    for (const n of distinct) {
      const slots = this.#byTrigram.lists[n];
      if (!slots) continue;
      for (let i = 0; i < slots.length; i++) {
        const slot = slots[i] as number;
        if (counts[slot] === 0) touched.push(slot);
        counts[slot] = (counts[slot] as number) + 1;
      }
    }
    const out: TitleHits = { ids: [], qualities: [], scores: [], others: [...this.#other] };
    if (this.#inQ.length < this.#byWord.size) {
      this.#inQ = new Int32Array(this.#byWord.size * 2);
      this.#distinctive = new Int32Array(this.#byWord.size * 2);
    }
    const distinctiveWords: number[] = [];
    for (const w of query.allWords) {
      const n = this.#byWord.numberOf(w);
      if (n !== undefined) this.#inQ[n] = generation;
    }
    for (const w of query.words) {
      const n = this.#byWord.numberOf(w);
      if (n !== undefined && this.#distinctive[n] !== generation) {
        this.#distinctive[n] = generation;
        distinctiveWords.push(n);
      }
    }
    // at least half of the title's words in q, one of them distinctive
    const inQMarks = this.#inQ;
    const distinctiveMarks = this.#distinctive;
    const slotWords = this.#words;
    const wordCounts = this.#wordCounts;
    const wordRule = (slot: number) => {
      const words = slotWords[slot] as Int32Array;
      let inQ = 0;
      let distinctive = false;
      for (let i = 0; i < words.length; i++) {
        const n = words[i] as number;
        if (inQMarks[n] === generation) inQ++;
        if (distinctiveMarks[n] === generation) distinctive = true;
      }
      return distinctive && 2 * inQ >= (wordCounts[slot] as number);
    };
    const considered = this.#considered;
    const consider = (slot: number) => {
      if (considered[slot] === generation || !this.#alive[slot]) return;
      considered[slot] = generation;
      const title = this.#titles[slot] as string;
      const sequence = this.#sequences[slot] as Int32Array;
      const common = counts[slot] as number;
      const size = this.#sizes[slot] as number;
      const sim = similarity(common, size, nq);
      // word similarity is at most the share of the first text's trigrams the other holds
      const qInTitleAtMost = Math.fround(common / nq);
      const qInTitle =
        qInTitleAtMost >= WORD_SIMILARITY
          ? wordSimilarityOf(qSequence, sequence, numbered, this.#scratch)
          : undefined;
      if (sim < SIMILARITY && (qInTitle ?? 0) < WORD_SIMILARITY && !wordRule(slot)) return;
      out.ids.push(this.#ids[slot] as string);
      out.qualities.push(title === q ? 'exact' : title.startsWith(`${q} `) ? 'prefix' : 'fuzzy');
      if (title === q) {
        out.scores.push(1);
        return;
      }
      // podcast_title_score, in double precision over pg_trgm's single-precision results; a part
      // whose bound cannot pass the best so far is not computed
      const qWeight = 0.7 + 0.3 * Math.min(1, q.length / Math.max(title.length, 1));
      const titleWeight = 0.6 + 0.4 * Math.min(1, title.length / Math.max(q.length, 1));
      let score = sim;
      if (qInTitleAtMost * qWeight > score)
        score = Math.max(
          score,
          (qInTitle ?? wordSimilarityOf(qSequence, sequence, numbered, this.#scratch)) * qWeight,
        );
      if (Math.fround(size === 0 ? 0 : common / size) * titleWeight > score)
        score = Math.max(score, wordSimilarityOf(sequence, qSequence, numbered, this.#scratch) * titleWeight);
      out.scores.push(score);
    };
    // only a title that shares enough trigrams, or a distinctive word, may match
    const sizes = this.#sizes;
    for (let i = 0; i < touched.length; i++) {
      const slot = touched[i] as number;
      const common = counts[slot] as number;
      if (
        similarity(common, sizes[slot] as number, nq) >= SIMILARITY ||
        Math.fround(common / nq) >= WORD_SIMILARITY
      )
        consider(slot);
    }
    // the others can match by their words alone
    for (const n of distinctiveWords) {
      const slots = this.#byWord.lists[n] as number[];
      for (let i = 0; i < slots.length; i++) {
        const slot = slots[i] as number;
        if (considered[slot] === generation) continue;
        if (wordRule(slot)) consider(slot);
        else considered[slot] = generation;
      }
    }
    for (const slot of touched) counts[slot] = 0;
    return out;
  }

  #add(id: string, title: string, text: readonly string[]) {
    const slot = this.#ids.length;
    const sequence = Int32Array.from(text, (t) => this.#byTrigram.add(t));
    const distinct = new Set(sequence);
    const words = title === '' ? [] : title.split(' ');
    const wordNumbers = Int32Array.from(new Set(words), (w) => this.#byWord.add(w));
    this.#words.push(wordNumbers);
    this.#wordCounts.push(words.length);
    this.#ids.push(id);
    this.#titles.push(title);
    this.#sequences.push(sequence);
    this.#sizes.push(distinct.size);
    this.#alive.push(true);
    this.#slotOf.set(id, slot);
    for (const n of distinct) (this.#byTrigram.lists[n] as number[]).push(slot);
    for (const n of wordNumbers) (this.#byWord.lists[n] as number[]).push(slot);
  }

  #compact() {
    const live = [...this.#slotOf].map(([id, slot]) => [id, this.#titles[slot] as string] as const);
    this.#ids = [];
    this.#titles = [];
    this.#sequences = [];
    this.#sizes = [];
    this.#words = [];
    this.#wordCounts = [];
    this.#alive = [];
    this.#dead = 0;
    this.#slotOf.clear();
    this.#byTrigram = new Postings();
    this.#byWord = new Postings();
    for (const [id, title] of live) this.#add(id, title, trigramSequence(title) ?? []);
  }
}
