import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldWords } from '../../../src/matching/engine/text-folding.ts';
import { builtinProvider } from '../../../src/search/semantic/word-vectors.ts';
import { type SearchHarness, searchHarness } from '../support.ts';
import { relevanceCorpus, relevantEpisodeId } from './corpus.ts';
import { PAIRS, STOP_WORDS } from './paraphrases.ts';

const SEARCH = '/v1/podcasts/episodes/search';
const DISTRACTORS = 400;

let h: SearchHarness;
beforeAll(async () => {
  h = await searchHarness('postgres', builtinProvider);
  await h.ingest(relevanceCorpus(DISTRACTORS));
}, 180_000);
afterAll(() => h?.close());

/** Share of the pairs whose episode is among the first 10 items of the query built by `query`. */
async function recallAt10(query: (text: string) => Record<string, string>) {
  let found = 0;
  for (const [i, pair] of PAIRS.entries()) {
    const { status, body } = await h.json(SEARCH, { ...query(pair.query), limit: '10' });
    expect(status).toBe(200);
    if (body.data.some((item: { episode: { id: string } }) => item.episode.id === relevantEpisodeId(i)))
      found++;
  }
  return found / PAIRS.length;
}

describe('relevance of semantic search with the built-in model (paraphrases)', () => {
  it('uses at least 40 queries, none sharing a word with its passage but function words', () => {
    expect(PAIRS.length).toBeGreaterThanOrEqual(40);
    for (const pair of PAIRS) {
      const asked = new Set(foldWords(pair.query).filter((w) => !STOP_WORDS.has(w)));
      expect(pair.passage.flatMap(foldWords).filter((w) => asked.has(w))).toEqual([]);
    }
  });

  it('finds the paraphrased passage in the top 10 for at least 60% of queries, far above keywords', async () => {
    const semantic = await recallAt10((text) => ({ semantic_search: text }));
    const keyword = await recallAt10((text) => ({ keyword_search: text, keyword_match: 'ranked' }));
    const hybrid = await recallAt10((text) => ({
      semantic_search: text,
      keyword_search: text,
      keyword_match: 'ranked',
    }));
    console.log(
      `recall@10 over ${PAIRS.length} paraphrase queries, ${PAIRS.length + DISTRACTORS} episodes: ` +
        `semantic ${semantic.toFixed(2)}, keyword (ranked) ${keyword.toFixed(2)}, hybrid ${hybrid.toFixed(2)}`,
    );
    expect(semantic).toBeGreaterThanOrEqual(0.6);
    expect(semantic).toBeGreaterThan(keyword);
  }, 120_000);
});
