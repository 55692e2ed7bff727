import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { embeddingProvider } from '../../../src/search/capability.ts';
import { BUILTIN_MODEL } from '../../../src/search/semantic/word-vectors.ts';

describe('choosing the embeddings provider', () => {
  it('uses the built-in model without EARSHOT_EMBEDDINGS_URL', () => {
    const provider = embeddingProvider(loadConfig({}));
    expect([provider.model, provider.minSimilarity]).toEqual([BUILTIN_MODEL, 0.3]);
  });

  it('uses the API with its model and similarity floor when EARSHOT_EMBEDDINGS_URL is set', () => {
    const provider = embeddingProvider(
      loadConfig({
        EARSHOT_EMBEDDINGS_URL: 'http://127.0.0.1:9/',
        EARSHOT_EMBEDDINGS_MODEL: 'text-embedding-3-small',
        EARSHOT_EMBEDDINGS_MIN_SIMILARITY: '0.35',
      }),
    );
    expect([provider.model, provider.minSimilarity]).toEqual(['text-embedding-3-small', 0.35]);
  });

  it('refuses to start with a URL but no model, or a URL that is not http(s)', () => {
    expect(() => loadConfig({ EARSHOT_EMBEDDINGS_URL: 'http://127.0.0.1:9' })).toThrow(
      /EARSHOT_EMBEDDINGS_MODEL/,
    );
    expect(() => loadConfig({ EARSHOT_EMBEDDINGS_URL: 'ftp://x', EARSHOT_EMBEDDINGS_MODEL: 'm' })).toThrow(
      /http\(s\) URL/,
    );
  });

  it('turns semantic search off with EARSHOT_SEMANTIC_SEARCH=off, on by default', () => {
    expect(loadConfig({}).semanticSearch).toBe(true);
    expect(loadConfig({ EARSHOT_SEMANTIC_SEARCH: 'off' }).semanticSearch).toBe(false);
    expect(() => loadConfig({ EARSHOT_SEMANTIC_SEARCH: 'no' })).toThrow(/EARSHOT_SEMANTIC_SEARCH/);
  });
});
