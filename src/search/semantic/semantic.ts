import type { Logger } from 'pino';
import { catalogEpisodesByIds } from '../../../projections/catalog-episodes/queries.ts';
import {
  type EpisodeScope,
  type KeywordFilter,
  searchEpisodes,
} from '../../../projections/search-passages/queries.ts';
import type { Db, Queryable } from '../../db/db.ts';
import { UnavailableError } from '../../errors.ts';
import { LoadedIndex } from './loaded-index.ts';
import { type EmbeddingProvider, EmbeddingsRefused, EmbeddingsUnavailable } from './provider.ts';
import type { PassageHit } from './vector-index.ts';

/** Passages ranked per search; its episodes are the results (docs/semantic-search.md). */
export const SEARCH_PASSAGES = 1000;
/** Passages counted per semantic timeseries. */
export const TIMESERIES_PASSAGES = 10_000;
/** Keyword-matching episodes a hybrid search intersects with. */
export const KEYWORD_EPISODES = 1000;
/** Reciprocal rank fusion's constant: score = Σ 1 / (RRF_K + rank). */
const RRF_K = 60;
/** Episodes a filter may let through before ranking (more are not considered). */
const SCOPE_EPISODES = 1_000_000;

/** How long a query waits for the process's first load before answering 503 semantic_search_loading. */
const LOAD_WAIT_MS = 2000;
/** Query vectors kept per process. */
const QUERY_CACHE = 1000;
/** Retry-After of a 503: semantic_search_loading and embeddings_unavailable. */
const RETRY_AFTER_S = 5;

/** The provider and the in-memory index of its model, shared by every request of the process. */
export interface Semantic {
  provider: EmbeddingProvider;
  index: LoadedIndex;
  /** Both the index and the provider's model are in memory. */
  loaded: boolean;
  /** The load under way, if any; it never rejects (a failure is logged). */
  loading: Promise<void> | undefined;
  log: Pick<Logger, 'warn'>;
  /** Recent query vectors by text. */
  queries: Map<string, Float32Array>;
}

/** Loads the index and the model (an empty call reads the built-in model's table; an API is not called). */
function load(semantic: Semantic): Promise<void> {
  semantic.loading ??= Promise.all([semantic.index.current(), semantic.provider.embed([])]).then(
    () => {
      semantic.loaded = true;
    },
    (error: unknown) => {
      semantic.loading = undefined;
      semantic.log.warn({ err: error }, 'semantic search: loading failed; the next query tries again');
    },
  );
  return semantic.loading;
}

/**
 * The semantic search of this API process; the load of its index and model starts now, in the
 * background (docs/semantic-search.md, "Start-up and turning it off").
 */
export function semanticOf(db: Db, provider: EmbeddingProvider, log: Pick<Logger, 'warn'>): Semantic {
  const semantic: Semantic = {
    provider,
    index: new LoadedIndex(db, provider.model),
    loaded: false,
    loading: undefined,
    log,
    queries: new Map(),
  };
  void load(semantic);
  return semantic;
}

/** Waits up to LOAD_WAIT_MS for the load (started again after a failure), then answers 503 semantic_search_loading. */
async function whenLoaded(semantic: Semantic) {
  if (semantic.loaded) return;
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, LOAD_WAIT_MS);
  });
  try {
    await Promise.race([load(semantic), waited]);
  } finally {
    clearTimeout(timer);
  }
  if (!semantic.loaded)
    throw new UnavailableError(
      'semantic_search_loading',
      'This process is still loading its semantic search index; retry later.',
      {
        message: 'Retry after the Retry-After seconds, or search with keyword_search alone.',
        action: 'retry',
      },
      { retryAfterSeconds: RETRY_AFTER_S },
    );
}

export interface SemanticEpisode {
  episode_id: string;
  /** Cosine similarity of the best passage, or the normalised fused score of a hybrid. */
  score: number;
  source: 'semantic' | 'hybrid';
  /** Its passages among the ranked ones, best first. */
  passages: PassageHit[];
  published_at?: Date;
}

/** The query's vector; the latest QUERY_CACHE are kept, so a query's pages and diagnostics embed it once. */
async function embedQuery(semantic: Semantic, text: string): Promise<Float32Array> {
  const { queries } = semantic;
  const cached = queries.get(text);
  if (cached) return cached;
  try {
    const [vector] = await semantic.provider.embed([text]);
    queries.set(text, vector!);
    if (queries.size > QUERY_CACHE) queries.delete(queries.keys().next().value!);
    return vector!;
  } catch (error) {
    if (error instanceof EmbeddingsUnavailable)
      throw new UnavailableError(
        'embeddings_unavailable',
        'The embeddings provider cannot answer now; retry later.',
        { message: 'Retry in a few seconds, or search with keyword_search alone.', action: 'retry' },
        { cause: error, retryAfterSeconds: RETRY_AFTER_S },
      );
    if (!(error instanceof EmbeddingsRefused)) throw error;
    // The API refused the query or answered something unusable: not the caller's fault.
    throw new UnavailableError(
      'embeddings_refused',
      'The embeddings provider refused to embed this query.',
      {
        message:
          'Search with keyword_search alone; the operator should check EARSHOT_EMBEDDINGS_URL and EARSHOT_EMBEDDINGS_MODEL.',
      },
      { cause: error },
    );
  }
}

/** The episodes the filters let through (none given: every episode), with their publication dates. */
async function scoped(db: Queryable, scope: EpisodeScope, keywords: KeywordFilter | undefined) {
  if (keywords === undefined && Object.keys(scope).length === 0) return undefined;
  const hits = keywords
    ? await searchEpisodes(db, scope, keywords, 'relevance', KEYWORD_EPISODES, 0)
    : await searchEpisodes(db, scope, undefined, 'recency', SCOPE_EPISODES, 0);
  return hits.map((h) => ({ id: h.episode_id, published_at: new Date(h.published_at) }));
}

/**
 * Episodes whose passages are closest in meaning to `text` among those the filters let through
 * (filters first, then ranking). With keywords, only episodes that also match them (the
 * intersection), ranked by reciprocal rank fusion of the semantic and keyword ranks.
 */
export async function semanticEpisodes(
  db: Queryable,
  semantic: Semantic,
  text: string,
  scope: EpisodeScope,
  keywords: KeywordFilter | undefined,
  passages = SEARCH_PASSAGES,
): Promise<SemanticEpisode[]> {
  await whenLoaded(semantic);
  const [query, allowed] = await Promise.all([embedQuery(semantic, text), scoped(db, scope, keywords)]);
  if (allowed?.length === 0) return [];
  const index = await semantic.index.current();
  const hits =
    index?.search(
      query,
      passages,
      semantic.provider.minSimilarity,
      allowed?.map((a) => a.id),
    ) ?? [];
  const byEpisode = new Map<string, SemanticEpisode>();
  for (const hit of hits) {
    const found = byEpisode.get(hit.episodeId);
    if (found) found.passages.push(hit);
    else
      byEpisode.set(hit.episodeId, {
        episode_id: hit.episodeId,
        score: hit.score,
        source: 'semantic',
        passages: [hit],
      });
  }
  const dates = new Map(allowed?.map((a) => [a.id, a.published_at]));
  const episodes = [...byEpisode.values()];
  for (const e of episodes) {
    const at = dates.get(e.episode_id);
    if (at) e.published_at = at;
  }
  if (keywords === undefined) return episodes;
  // Hybrid: allowed is the keyword ranking, best first; every semantic episode is in it.
  const keywordRank = new Map(allowed?.map((a, i) => [a.id, i + 1]));
  const best = 2 / (RRF_K + 1);
  return episodes
    .map((e, i) => ({
      ...e,
      source: 'hybrid' as const,
      score: (1 / (RRF_K + i + 1) + 1 / (RRF_K + keywordRank.get(e.episode_id)!)) / best,
    }))
    .sort((a, b) => b.score - a.score);
}

/** Newest first (then id), for sort=recency. */
export async function byRecency(db: Queryable, episodes: SemanticEpisode[]): Promise<SemanticEpisode[]> {
  const missing = episodes.filter((e) => e.published_at === undefined).map((e) => e.episode_id);
  if (missing.length) {
    const dates = new Map(
      (await catalogEpisodesByIds(db, missing)).map((e) => [e.id, new Date(e.published_at)]),
    );
    for (const e of episodes) e.published_at ??= dates.get(e.episode_id) ?? new Date(0);
  }
  return [...episodes].sort(
    (a, b) => b.published_at!.getTime() - a.published_at!.getTime() || (a.episode_id < b.episode_id ? 1 : -1),
  );
}
