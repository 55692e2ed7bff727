import { embedder } from '../../consumers/embedder/embedder.ts';
import { searchPassagesProjection } from '../../projections/search-passages/projection.ts';
import type { Capability, Runtime, Worker } from '../runtime.ts';
import { runSubscription } from '../subscriptions/runner.ts';
import { type SearchSlots, searchesInFlight } from './in-flight.ts';
import { searchRoutes } from './routes.ts';
import { openAiProvider } from './semantic/openai.ts';
import type { EmbeddingProvider } from './semantic/provider.ts';
import { builtinProvider } from './semantic/word-vectors.ts';
import { SEARCH_STATEMENT_TIMEOUT_MS } from './statement-timeout.ts';

/** EARSHOT_EMBEDDINGS_URL's API when set, else the built-in offline model (docs/semantic-search.md). */
export const embeddingProvider = (config: Runtime['config']): EmbeddingProvider =>
  config.embeddings ? openAiProvider(config.embeddings) : builtinProvider;

/** The embedder as a worker of the projector role. */
function embedderWorker(runtime: Pick<Runtime, 'db' | 'store' | 'log'>, provider: EmbeddingProvider): Worker {
  const subscriber = embedder(provider);
  const log = runtime.log.child({ consumer: subscriber.name });
  return {
    name: subscriber.name,
    role: 'projector',
    subscriber,
    run: (signal) =>
      runSubscription(runtime.db, runtime.store, subscriber, {
        signal,
        log,
        onError: (error) => log.error({ err: error }, 'embedder attempt failed; retrying'),
      }),
  };
}

/**
 * Dialogue search and entity mentions over every transcript, by keyword (docs/search.md) and by
 * meaning (docs/semantic-search.md). With `embeddings`, semantic search is on: the embedder runs
 * (projector role) and the API loads the vector index; without it, semantic_search answers 422.
 */
export function searchCapability(
  deps: {
    now(): Date;
    statementTimeoutMs?: number;
    /** The process's search slots (src/composition.ts); by default slots of this surface alone. */
    inSlot?: SearchSlots;
  },
  embeddings?: { runtime: Pick<Runtime, 'db' | 'store' | 'log'>; provider: EmbeddingProvider },
): Capability {
  return {
    name: 'search',
    routes: [
      searchRoutes({
        now: deps.now,
        provider: embeddings?.provider,
        statementTimeoutMs: deps.statementTimeoutMs ?? SEARCH_STATEMENT_TIMEOUT_MS,
        inSlot: deps.inSlot ?? searchesInFlight(),
      }),
    ],
    projections: [searchPassagesProjection],
    workers: embeddings ? [embedderWorker(embeddings.runtime, embeddings.provider)] : [],
  };
}
