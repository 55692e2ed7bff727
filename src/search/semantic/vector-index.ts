/**
 * The in-memory vector index of one API process (docs/semantic-search.md, "Vector search").
 *
 * Small scopes are ranked exactly. Past `exactLimit` candidate passages the index is an IVF over
 * a reduced space: when it first holds `exactLimit` passages it fits the `reduced` principal
 * directions of its vectors and `lists` centroids (k-means) in that space; every passage is kept
 * in the list of its nearest centroid. A query visits the lists nearest to it (at least `probes`,
 * and until `minScanned` allowed passages were seen), ranks what it finds by the reduced vectors,
 * and ranks the best `pool` again on their full vectors. Filters come first: a passage outside the
 * allowed episodes is never scored.
 */
interface Tuning {
  exactLimit: number;
  reduced: number;
  lists: number;
  probes: number;
  minScanned: number;
  pool: number;
}
const DEFAULT_TUNING: Tuning = {
  exactLimit: 50_000,
  reduced: 24,
  lists: 256,
  probes: 16,
  minScanned: 40_000,
  pool: 4000,
};
const FIT_SAMPLE = 20_000;
const FIT_ROUNDS = 6;
const KMEANS_ROUNDS = 8;

export interface PassageHit {
  episodeId: string;
  start: number;
  lines: number;
  score: number;
}

/** The k best (score, slot) pairs seen: a min-heap on score. */
class TopK {
  readonly scores: Float32Array;
  readonly slots: Int32Array;
  size = 0;
  constructor(readonly k: number) {
    this.scores = new Float32Array(k);
    this.slots = new Int32Array(k);
  }
  /** The score a new entry must beat once full. */
  get floor() {
    return this.size < this.k ? Number.NEGATIVE_INFINITY : this.scores[0]!;
  }
  push(score: number, slot: number) {
    const { scores, slots } = this;
    let i: number;
    if (this.size < this.k) {
      i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (scores[parent]! <= score) break;
        scores[i] = scores[parent]!;
        slots[i] = slots[parent]!;
        i = parent;
      }
    } else {
      if (score <= scores[0]!) return;
      i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= this.size) break;
        const right = left + 1;
        const child = right < this.size && scores[right]! < scores[left]! ? right : left;
        if (scores[child]! >= score) break;
        scores[i] = scores[child]!;
        slots[i] = slots[child]!;
        i = child;
      }
    }
    scores[i] = score;
    slots[i] = slot;
  }
  /** The entries, in no particular order. */
  entries(): { slot: number; score: number }[] {
    return Array.from({ length: this.size }, (_, i) => ({ slot: this.slots[i]!, score: this.scores[i]! }));
  }
}

function dot(a: Float32Array, aOffset: number, b: Float32Array, bOffset: number, n: number) {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let k = 0;
  for (; k + 3 < n; k += 4) {
    s0 += a[aOffset + k]! * b[bOffset + k]!;
    s1 += a[aOffset + k + 1]! * b[bOffset + k + 1]!;
    s2 += a[aOffset + k + 2]! * b[bOffset + k + 2]!;
    s3 += a[aOffset + k + 3]! * b[bOffset + k + 3]!;
  }
  for (; k < n; k++) s0 += a[aOffset + k]! * b[bOffset + k]!;
  return s0 + s1 + s2 + s3;
}

export class VectorIndex {
  private capacity = 0;
  private used = 0;
  private vectors = new Float32Array(0);
  private reduced = new Float32Array(0);
  private episodeOf = new Int32Array(0);
  private startOf = new Int32Array(0);
  private linesOf = new Int32Array(0);
  private readonly free: number[] = [];
  private readonly episodes: string[] = [];
  private readonly episodeIndex = new Map<string, number>();
  private readonly slotsOf: number[][] = [];
  /** reduced × dimensions, rows orthonormal; null until fitted. */
  private basis: Float32Array | null = null;
  /** lists × reduced centroids, each slot's list, and the slots of each list. */
  private centroids = new Float32Array(0);
  private listOf = new Int32Array(0);
  private lists: number[][] = [];
  private live = 0;

  private readonly t: Tuning;
  constructor(
    readonly dimensions: number,
    tuning: Partial<Tuning> = {},
  ) {
    this.t = { ...DEFAULT_TUNING, ...tuning };
  }

  /** Passages held. */
  get size() {
    return this.live;
  }

  /** Bytes of the typed arrays (vectors, projections, slot columns). */
  get bytes() {
    return (
      this.vectors.byteLength +
      this.reduced.byteLength +
      this.episodeOf.byteLength +
      this.startOf.byteLength +
      this.linesOf.byteLength
    );
  }

  private grow(needed: number) {
    if (needed <= this.capacity) return;
    const capacity = Math.max(needed, this.capacity * 2, 1024);
    const d = this.dimensions;
    const resize = <T extends Float32Array | Int32Array>(old: T, make: (n: number) => T, width: number) => {
      const next = make(capacity * width);
      next.set(old);
      return next;
    };
    this.vectors = resize(this.vectors, (n) => new Float32Array(n), d);
    if (this.basis) this.reduced = resize(this.reduced, (n) => new Float32Array(n), this.t.reduced);
    this.episodeOf = resize(this.episodeOf, (n) => new Int32Array(n), 1);
    this.startOf = resize(this.startOf, (n) => new Int32Array(n), 1);
    this.linesOf = resize(this.linesOf, (n) => new Int32Array(n), 1);
    if (this.basis) this.listOf = resize(this.listOf, (n) => new Int32Array(n), 1);
    this.capacity = capacity;
  }

  /** Projects the slot's vector on the basis and files it in the list of its nearest centroid. */
  private project(slot: number) {
    const d = this.dimensions;
    for (let r = 0; r < this.t.reduced; r++)
      this.reduced[slot * this.t.reduced + r] = dot(this.basis!, r * d, this.vectors, slot * d, d);
    const list = this.nearest(this.reduced, slot * this.t.reduced);
    this.listOf[slot] = list;
    this.lists[list]!.push(slot);
  }

  private nearest(points: Float32Array, offset: number) {
    let best = 0;
    let bestScore = Number.NEGATIVE_INFINITY;
    const count = this.centroids.length / this.t.reduced;
    for (let c = 0; c < count; c++) {
      const score = dot(this.centroids, c * this.t.reduced, points, offset, this.t.reduced);
      if (score > bestScore) {
        bestScore = score;
        best = c;
      }
    }
    return best;
  }

  /** Sets an episode's passages (none: the episode leaves the index). */
  replaceEpisode(
    episodeId: string,
    passages: readonly { start: number; lines: number; vector: Float32Array }[],
  ) {
    let e = this.episodeIndex.get(episodeId);
    if (e === undefined) {
      e = this.episodes.length;
      this.episodes.push(episodeId);
      this.episodeIndex.set(episodeId, e);
      this.slotsOf.push([]);
    }
    for (const slot of this.slotsOf[e]!) {
      this.episodeOf[slot] = -1;
      this.free.push(slot);
      if (this.basis) {
        const list = this.lists[this.listOf[slot]!]!;
        list[list.indexOf(slot)] = list.at(-1)!;
        list.pop();
      }
    }
    this.live -= this.slotsOf[e]!.length;
    const slots: number[] = [];
    for (const p of passages) {
      if (p.vector.length !== this.dimensions) continue;
      let slot = this.free.pop();
      if (slot === undefined) {
        this.grow(this.used + 1);
        slot = this.used++;
      }
      this.vectors.set(p.vector, slot * this.dimensions);
      this.episodeOf[slot] = e;
      this.startOf[slot] = p.start;
      this.linesOf[slot] = p.lines;
      if (this.basis) this.project(slot);
      slots.push(slot);
    }
    this.slotsOf[e] = slots;
    this.live += slots.length;
    if (!this.basis && this.live >= this.t.exactLimit) this.fit();
  }

  /**
   * The principal directions of a sample of the stored vectors, by subspace iteration (X^T X V,
   * then Gram-Schmidt), and every stored vector's projection on them.
   */
  private fit() {
    const d = this.dimensions;
    const step = Math.max(1, Math.floor(this.used / FIT_SAMPLE));
    const sample: number[] = [];
    for (let s = 0; s < this.used; s += step) if (this.episodeOf[s]! >= 0) sample.push(s);
    let seed = 1;
    const random = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647 - 0.5;
    };
    let basis = Float32Array.from({ length: this.t.reduced * d }, random);
    const xv = new Float32Array(this.t.reduced);
    for (let round = 0; round < FIT_ROUNDS; round++) {
      const next = new Float32Array(this.t.reduced * d);
      for (const s of sample) {
        for (let r = 0; r < this.t.reduced; r++) xv[r] = dot(basis, r * d, this.vectors, s * d, d);
        for (let r = 0; r < this.t.reduced; r++)
          for (let k = 0; k < d; k++) next[r * d + k]! += xv[r]! * this.vectors[s * d + k]!;
      }
      for (let r = 0; r < this.t.reduced; r++) {
        for (let q = 0; q < r; q++) {
          const overlap = dot(next, r * d, next, q * d, d);
          for (let k = 0; k < d; k++) next[r * d + k]! -= overlap * next[q * d + k]!;
        }
        const norm = Math.sqrt(dot(next, r * d, next, r * d, d)) || 1;
        for (let k = 0; k < d; k++) next[r * d + k]! /= norm;
      }
      basis = next;
    }
    this.basis = basis;
    // Centroids: k-means (spherical: by dot product) on the sample's reduced vectors.
    const points = new Float32Array(sample.length * this.t.reduced);
    sample.forEach((s, i) => {
      for (let r = 0; r < this.t.reduced; r++)
        points[i * this.t.reduced + r] = dot(basis, r * d, this.vectors, s * d, d);
    });
    const lists = Math.min(this.t.lists, sample.length);
    const spacing = Math.floor(sample.length / lists);
    this.centroids = new Float32Array(lists * this.t.reduced);
    for (let c = 0; c < lists; c++)
      this.centroids.set(
        points.subarray(c * spacing * this.t.reduced, (c * spacing + 1) * this.t.reduced),
        c * this.t.reduced,
      );
    for (let round = 0; round < KMEANS_ROUNDS; round++) {
      const sums = new Float32Array(lists * this.t.reduced);
      const counts = new Int32Array(lists);
      for (let i = 0; i < sample.length; i++) {
        const c = this.nearest(points, i * this.t.reduced);
        counts[c]!++;
        for (let r = 0; r < this.t.reduced; r++)
          sums[c * this.t.reduced + r]! += points[i * this.t.reduced + r]!;
      }
      for (let c = 0; c < lists; c++)
        if (counts[c]! > 0)
          this.centroids.set(
            sums.subarray(c * this.t.reduced, (c + 1) * this.t.reduced).map((v) => v / counts[c]!),
            c * this.t.reduced,
          );
    }
    this.lists = Array.from({ length: lists }, () => []);
    this.reduced = new Float32Array(this.capacity * this.t.reduced);
    this.listOf = new Int32Array(this.capacity);
    for (let s = 0; s < this.used; s++) if (this.episodeOf[s]! >= 0) this.project(s);
  }

  /**
   * The k passages most similar to `query` (a unit vector) with a score of at least `minScore`,
   * best first, among the passages of `allowed` episodes (every episode when undefined).
   */
  search(query: Float32Array, k: number, minScore: number, allowed?: Iterable<string>): PassageHit[] {
    const d = this.dimensions;
    if (query.length !== d || k <= 0) return [];
    let mask: Uint8Array | undefined;
    let candidates = this.live;
    let few: number[] | undefined;
    if (allowed !== undefined) {
      mask = new Uint8Array(this.episodes.length);
      candidates = 0;
      for (const id of allowed) {
        const e = this.episodeIndex.get(id);
        if (e === undefined || mask[e]) continue;
        mask[e] = 1;
        candidates += this.slotsOf[e]!.length;
      }
      if (candidates <= this.t.exactLimit) {
        few = [];
        for (let e = 0; e < mask.length; e++) if (mask[e]) for (const s of this.slotsOf[e]!) few.push(s);
      }
    }
    const best = new TopK(k);
    const exact = (slot: number) => {
      const score = dot(query, 0, this.vectors, slot * d, d);
      if (score >= minScore && score > best.floor) best.push(score, slot);
    };
    if (few) for (const slot of few) exact(slot);
    else if (!this.basis || candidates <= this.t.exactLimit) {
      for (let s = 0; s < this.used; s++) {
        const e = this.episodeOf[s]!;
        if (e >= 0 && (!mask || mask[e])) exact(s);
      }
    } else {
      const q = new Float32Array(this.t.reduced);
      for (let r = 0; r < this.t.reduced; r++) q[r] = dot(this.basis, r * d, query, 0, d);
      const pool = new TopK(Math.max(this.t.pool, k));
      const reduced = this.reduced;
      const order = this.lists
        .map((_, c) => ({ c, score: dot(this.centroids, c * this.t.reduced, q, 0, this.t.reduced) }))
        .sort((a, b) => b.score - a.score);
      let scanned = 0;
      for (const [probed, { c }] of order.entries()) {
        if (probed >= this.t.probes && scanned >= this.t.minScanned) break;
        for (const s of this.lists[c]!) {
          const e = this.episodeOf[s]!;
          if (e < 0 || (mask && !mask[e])) continue;
          scanned++;
          const score = dot(q, 0, reduced, s * this.t.reduced, this.t.reduced);
          if (score > pool.floor) pool.push(score, s);
        }
      }
      for (let i = 0; i < pool.size; i++) exact(pool.slots[i]!);
    }
    // Equal scores (the same text in two episodes) by episode and start, so every process and
    // every page ranks them alike.
    return best
      .entries()
      .map(({ slot, score }) => ({
        episodeId: this.episodes[this.episodeOf[slot]!]!,
        start: this.startOf[slot]!,
        lines: this.linesOf[slot]!,
        score,
      }))
      .sort(
        (a, b) =>
          b.score - a.score ||
          (a.episodeId < b.episodeId ? -1 : a.episodeId > b.episodeId ? 1 : 0) ||
          a.start - b.start,
      );
  }

  /** Exact ranking of every allowed passage, whatever the size: the benchmark's yardstick. */
  searchExact(query: Float32Array, k: number): PassageHit[] {
    const saved = this.basis;
    this.basis = null;
    try {
      return this.search(query, k, Number.NEGATIVE_INFINITY);
    } finally {
      this.basis = saved;
    }
  }
}
