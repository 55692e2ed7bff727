/**
 * The embeddings provider port (docs/semantic-search.md, "Providers"): text in, unit vectors out.
 * `model` names the vectors it makes; vectors of different models are never compared.
 */
export interface EmbeddingProvider {
  /** Stored with every vector; a new model re-embeds every passage. */
  readonly model: string;
  /** Cosine similarity a passage needs to count as a match (docs/semantic-search.md). */
  readonly minSimilarity: number;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** A provider that cannot answer for now (unreachable, overloaded): the embedder waits, never parks. */
export class EmbeddingsUnavailable extends Error {
  readonly transient = true;
}

/** A provider that refused the input or answered something unusable: the embedder parks the event. */
export class EmbeddingsRefused extends Error {}

/** Scales a vector to length 1 in place (a zero vector stays zero). */
export function normalize(vector: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < vector.length; i++) norm += vector[i]! * vector[i]!;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
  return vector;
}
