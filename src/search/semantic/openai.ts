import type { EmbeddingsConfig } from '../../config.ts';
import { type EmbeddingProvider, EmbeddingsRefused, EmbeddingsUnavailable, normalize } from './provider.ts';

/** How long one embeddings call may take before it counts as unavailable. */
const TIMEOUT_MS = 30_000;

interface EmbeddingsResponse {
  data?: { index?: number; embedding?: unknown }[];
}

/**
 * An OpenAI-compatible embeddings API (docs/semantic-search.md, "Providers"): POST
 * {base}/v1/embeddings with { model, input }. Unreachable, 429 and 5xx answers are
 * EmbeddingsUnavailable (waited out); any other failure is permanent for that input.
 */
export function openAiProvider(options: EmbeddingsConfig): EmbeddingProvider {
  const url = `${options.url.replace(/\/+$/, '')}/v1/embeddings`;
  return {
    model: options.model,
    minSimilarity: options.minSimilarity,
    async embed(texts) {
      if (texts.length === 0) return [];
      // The call and the reading of its answer: a failure of either (refused, dropped, timed out) is
      // the API being unavailable, not a fault of the input.
      let response: Response;
      let text: string;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
          },
          body: JSON.stringify({ model: options.model, input: texts }),
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
        text = await response.text();
      } catch (error) {
        throw new EmbeddingsUnavailable(`embeddings API unreachable: ${(error as Error).message}`, {
          cause: error,
        });
      }
      if (response.status === 429 || response.status >= 500)
        throw new EmbeddingsUnavailable(`embeddings API answered ${response.status}`);
      if (!response.ok)
        throw new EmbeddingsRefused(`embeddings API answered ${response.status}: ${text.slice(0, 300)}`);
      let body: EmbeddingsResponse;
      try {
        body = JSON.parse(text) as EmbeddingsResponse;
      } catch (error) {
        throw new EmbeddingsRefused('embeddings API answered something that is not JSON', { cause: error });
      }
      const vectors: Float32Array[] = new Array(texts.length);
      for (const [i, item] of (body.data ?? []).entries()) {
        const at = item.index ?? i;
        if (!Array.isArray(item.embedding) || at < 0 || at >= texts.length)
          throw new EmbeddingsRefused('embeddings API answered an item without a usable embedding');
        vectors[at] = normalize(Float32Array.from(item.embedding as number[]));
      }
      if (vectors.filter(Boolean).length !== texts.length)
        throw new EmbeddingsRefused(
          `embeddings API answered ${body.data?.length ?? 0} embeddings for ${texts.length} inputs`,
        );
      return vectors;
    },
  };
}
