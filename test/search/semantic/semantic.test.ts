import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embedder } from '../../../consumers/embedder/embedder.ts';
import type { EpisodeTranscribed } from '../../../src/ingestion/events.ts';
import { ingestEvents } from '../../../src/ingestion/ingest.ts';
import { openAiProvider } from '../../../src/search/semantic/openai.ts';
import type { EmbeddingProvider } from '../../../src/search/semantic/provider.ts';
import { BUILTIN_MODEL, builtinProvider } from '../../../src/search/semantic/word-vectors.ts';
import { listParked } from '../../../src/subscriptions/parked.ts';
import { catchUpSubscription } from '../../../src/subscriptions/runner.ts';
import { eventually } from '../../e2e/harness.ts';
import { episodeEvent } from '../../fixtures/events.ts';
import { type EmbeddingsStandin, startEmbeddingsStandin } from '../../support/embeddings-standin.ts';
import { type SearchHarness, searchHarness } from '../support.ts';

const SEARCH = '/v1/podcasts/episodes/search';
const SERIES = '/v1/podcasts/episodes/timeseries';
const CHATTER = ['Welcome back to the show.', 'A quick word from our sponsor.', 'Thanks for listening.'];
const podB = { id: 'pod-b', title: 'Money Matters', slug: 'money-matters', language: 'en' };

const epRates = episodeEvent({
  id: 'ep-rates',
  publishedAt: '2026-10-10T08:00:00Z',
  lines: [
    ...CHATTER,
    'Let us get into it.',
    'So here is the news.',
    'The Fed hiked borrowing costs again this month.',
    'They want prices to stop climbing so fast.',
    'Mortgages got a lot more expensive overnight.',
    ...CHATTER,
  ],
});
const epLoans = episodeEvent({
  id: 'ep-loans',
  publishedAt: '2026-06-01T08:00:00Z',
  podcast: podB,
  lines: [
    'The central bank lifted its benchmark lending rate by half a point.',
    'Policymakers are worried about rising consumer prices.',
    'Borrowers will feel it in their monthly payments.',
    ...CHATTER,
  ],
});
const epGarden = episodeEvent({
  id: 'ep-garden',
  publishedAt: '2026-10-20T08:00:00Z',
  lines: [
    'I planted vegetables in raised beds this spring.',
    'Seedlings need sunlight and regular watering.',
    'By August the vines were heavy with fruit.',
    ...CHATTER,
  ],
});

const ids = (body: { data: { episode: { id: string } }[] }) => body.data.map((item) => item.episode.id);

describe('semantic search with the built-in model', () => {
  let h: SearchHarness;
  beforeAll(async () => {
    h = await searchHarness('postgres', builtinProvider);
    await h.ingest([epRates, epLoans, epGarden]);
  }, 120_000);
  afterAll(() => h?.close());

  it('finds passages by meaning, marks their lines and reports the source and similarity', async () => {
    const { status, body } = await h.json(SEARCH, {
      semantic_search: 'central banks raising interest rates',
    });
    expect(status).toBe(200);
    expect(ids(body).slice(0, 2).sort()).toEqual(['ep-loans', 'ep-rates']);
    expect(ids(body)).not.toContain('ep-garden');
    const rates = body.data.find((item: { episode: { id: string } }) => item.episode.id === 'ep-rates');
    expect(rates.match.source).toBe('semantic');
    expect(rates.match.relevance_score).toBeGreaterThan(0.3);
    expect(rates.match.relevance_score).toBeLessThanOrEqual(1);
    const marked = rates.windows.flatMap((w: { lines: { number: number; is_match: boolean }[] }) =>
      w.lines.filter((l) => l.is_match).map((l) => l.number),
    );
    expect(marked).toEqual([6, 7, 8, 9, 10]);
  });

  it('applies the filters before ranking', async () => {
    const { body } = await h.json(SEARCH, {
      semantic_search: 'central banks raising interest rates',
      podcast_id: 'money-matters',
    });
    expect(ids(body)).toEqual(['ep-loans']);
    const since = await h.json(SEARCH, {
      semantic_search: 'central banks raising interest rates',
      since: '2026-09-01',
    });
    expect(ids(since.body)).toEqual(['ep-rates']);
  });

  it('sorts newest first with sort=recency and pages with a cursor', async () => {
    const first = await h.json(SEARCH, {
      semantic_search: 'central banks raising interest rates',
      sort: 'recency',
      limit: '1',
    });
    expect(ids(first.body)).toEqual(['ep-rates']);
    expect(first.body.has_more).toBe(true);
    const second = await h.json(SEARCH, {
      semantic_search: 'central banks raising interest rates',
      sort: 'recency',
      limit: '1',
      cursor: first.body.cursor,
    });
    expect(ids(second.body)).toEqual(['ep-loans']);
  });

  it('answers a hybrid search with the episodes matching both, fused by rank', async () => {
    const { body } = await h.json(SEARCH, {
      semantic_search: 'central banks raising interest rates',
      keyword_search: 'mortgages',
    });
    expect(ids(body)).toEqual(['ep-rates']);
    expect(body.data[0].match.source).toBe('hybrid');
    expect(body.data[0].match.relevance_score).toBe(1);
  });

  it('explains an empty page: nothing close enough in meaning names semantic_search', async () => {
    const { body } = await h.json(SEARCH, { semantic_search: 'zxqv wplk' });
    expect(body.data).toEqual([]);
    expect(body.diagnostics).toMatchObject({
      filter: 'semantic_search',
      retry_with: { semantic_search: null },
    });
    const filtered = await h.json(SEARCH, {
      semantic_search: 'growing tomatoes',
      podcast_id: 'money-matters',
    });
    expect(filtered.body.diagnostics).toMatchObject({
      filter: 'podcast_id',
      retry_with: { podcast_id: null },
    });
  });

  it('counts close passages per bucket in a semantic timeseries', async () => {
    const { status, body } = await h.json(SERIES, {
      semantic_search: 'central banks raising interest rates',
      since: '2026-01-01',
      until: '2026-12-01',
      interval: 'month',
    });
    expect(status).toBe(200);
    const counted = body.buckets.filter((b: { episode_count: number }) => b.episode_count > 0);
    expect(counted.map((b: { start: string }) => b.start)).toEqual([
      '2026-06-01T00:00:00.000Z',
      '2026-10-01T00:00:00.000Z',
    ]);
    expect(body.total_episodes).toBe(2);
    expect(body.total_mentions).toBeGreaterThanOrEqual(2);
  });

  it('refuses a semantic timeseries without since, over two years, or with keyword_search', async () => {
    const query = { semantic_search: 'interest rates' };
    const cases: [Record<string, string>, string, string][] = [
      [query, 'since_required', 'query.since'],
      [{ ...query, since: '2024-01-01', until: '2026-11-01' }, 'range_too_large', 'query.since'],
      [
        { ...query, since: '2026-01-01', keyword_search: 'rates' },
        'conflicting_parameters',
        'query.keyword_search',
      ],
    ];
    for (const [params, code, location] of cases) {
      const { status, body } = await h.json(SERIES, params);
      expect(status).toBe(422);
      expect(body.error_code).toBe(code);
      expect(body.errors[0].location).toBe(location);
    }
  });

  it('stores the model id with each vector and replaces a re-sent episode', async () => {
    const { rows } = await h.db.query<{ model: string; n: number }>(
      "select model, count(*)::int as n from passage_embeddings where episode_id = 'ep-garden' group by model",
    );
    expect(rows).toEqual([{ model: BUILTIN_MODEL, n: 2 }]);
    await h.ingest([
      { ...epGarden, event_id: 'garden-v2', occurred_at: '2026-11-21T10:00:00Z', transcript: { lines: [] } },
    ]);
    // The index follows the change feed below the oldest open transaction of the server: poll.
    const found = await eventually(async () => {
      const { status, body } = await h.json(SEARCH, { semantic_search: 'growing tomatoes in the garden' });
      expect(status).toBe(200);
      return ids(body).includes('ep-garden') ? undefined : ids(body);
    });
    expect(found).not.toContain('ep-garden');
  });
});

describe('semantic search through an OpenAI-compatible embeddings API', () => {
  let h: SearchHarness;
  let api: EmbeddingsStandin;
  const config = (model: string) => ({ url: '', model, apiKey: 'sk-test', minSimilarity: 0.3 });
  beforeAll(async () => {
    api = await startEmbeddingsStandin();
    h = await searchHarness('postgres', openAiProvider({ ...config('standin-a'), url: api.url }));
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await api?.close();
  });

  it('embeds passages and queries through POST {base}/v1/embeddings with the configured model', async () => {
    await h.ingest([epRates, epGarden]);
    const { body } = await h.json(SEARCH, { semantic_search: 'central banks raising interest rates' });
    expect(ids(body)).toEqual(['ep-rates']);
    expect(api.requests.every((r) => r.model === 'standin-a' && r.authorization === 'Bearer sk-test')).toBe(
      true,
    );
    const { rows } = await h.db.query<{ model: string }>('select distinct model from passage_embeddings');
    expect(rows).toEqual([{ model: 'standin-a' }]);
  });

  it('embeds a query once for its pages and its diagnostics', async () => {
    const text = 'vegetable gardening tips';
    const empty = await h.json(SEARCH, { semantic_search: text, since: '2026-11-01' });
    expect(empty.body.diagnostics).toMatchObject({ filter: 'since' });
    await h.json(SEARCH, { semantic_search: text });
    expect(api.requests.filter((r) => r.input.includes(text))).toHaveLength(1);
  });

  it('parks an episode the API refuses and embeds the others', async () => {
    const poison: EpisodeTranscribed = episodeEvent({ id: 'ep-poison', lines: ['POISON pill.', ...CHATTER] });
    await h.ingest([poison, epLoans]);
    const parked = await listParked(h.db, 'embedder:standin-a');
    expect(parked.map((p) => p.streamId)).toEqual([expect.stringContaining('ep-poison')]);
    const { body } = await h.json(SEARCH, { semantic_search: 'central banks raising interest rates' });
    expect(ids(body).sort()).toEqual(['ep-loans', 'ep-rates']);
  });

  it('waits out an unavailable API instead of parking, and answers 503 to a query meanwhile', async () => {
    api.failWith = 503;
    const later = episodeEvent({ id: 'ep-later', lines: ['The central bank cut rates today.', ...CHATTER] });
    await ingestEvents(h.store, [later]);
    const provider = openAiProvider({ ...config('standin-a'), url: api.url });
    await expect(catchUpSubscription(h.db, h.store, embedder(provider), { retries: 0 })).rejects.toThrow(
      /503/,
    );
    const query = await h.json(SEARCH, { semantic_search: 'interest rates' });
    expect(query.status).toBe(503);
    expect(query.body.error_code).toBe('embeddings_unavailable');
    expect((await h.get(SEARCH, { semantic_search: 'interest rates' })).headers['retry-after']).toBe('5');
    expect((await listParked(h.db, 'embedder:standin-a')).map((p) => p.streamId)).toHaveLength(1);
    api.failWith = undefined;
    await h.ingest([]);
    const { body } = await h.json(SEARCH, { semantic_search: 'central banks raising interest rates' });
    expect(ids(body)).toContain('ep-later');
  });

  it('waits out a connection dropped in the middle of an answer, and answers 503 to a query meanwhile', async () => {
    api.dropBody = true;
    await ingestEvents(h.store, [episodeEvent({ id: 'ep-dropped', lines: ['Rates went up.', ...CHATTER] })]);
    const provider = openAiProvider({ ...config('standin-a'), url: api.url });
    await expect(catchUpSubscription(h.db, h.store, embedder(provider), { retries: 0 })).rejects.toThrow(
      /unreachable/,
    );
    const query = await h.json(SEARCH, { semantic_search: 'interest rates' });
    expect(query.status).toBe(503);
    expect(query.body.error_code).toBe('embeddings_unavailable');
    expect(await listParked(h.db, 'embedder:standin-a')).toHaveLength(1);
    api.dropBody = false;
    await h.ingest([]);
    expect(await listParked(h.db, 'embedder:standin-a')).toHaveLength(1);
  });

  it('answers 503 embeddings_refused when the API refuses the query, and 400 to a blank one', async () => {
    const refused = await h.json(SEARCH, { semantic_search: 'POISON query' });
    expect(refused.status).toBe(503);
    expect(refused.body.error_code).toBe('embeddings_refused');
    expect(refused.body.resolve.message).toMatch(/keyword_search/);
    const blank = await h.json(SEARCH, { semantic_search: '   ' });
    expect(blank.status).toBe(400);
    expect(blank.body.errors[0].location).toMatch(/semantic_search/);
  });

  it('re-embeds every passage when the model changes', async () => {
    const next = openAiProvider({ ...config('standin-b'), url: api.url });
    await catchUpSubscription(h.db, h.store, embedder(next), { retries: 0 });
    const { rows } = await h.db.query<{ model: string }>('select distinct model from passage_embeddings');
    expect(rows).toEqual([{ model: 'standin-b' }]);
  });
});

describe('semantic search while the API process loads its index and model', () => {
  it('starts loading with the API; until loaded a query answers 503 semantic_search_loading within a bound', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The built-in model, slow to load until released.
    const slow: EmbeddingProvider = {
      ...builtinProvider,
      embed: async (texts) => {
        await held;
        return builtinProvider.embed(texts);
      },
    };
    const h = await searchHarness('postgres', slow);
    try {
      const asked = Date.now();
      const early = await h.get(SEARCH, { semantic_search: 'central banks raising interest rates' });
      expect(early.statusCode).toBe(503);
      expect(early.json().error_code).toBe('semantic_search_loading');
      expect(early.headers['retry-after']).toBe('5');
      expect(Date.now() - asked).toBeLessThan(5000);
      release();
      await h.ingest([epLoans]);
      const { status, body } = await h.json(SEARCH, {
        semantic_search: 'central banks raising interest rates',
      });
      expect(status).toBe(200);
      expect(ids(body)).toEqual(['ep-loans']);
    } finally {
      release();
      await h.close();
    }
  }, 60_000);
});

describe('semantic search after a failed load', () => {
  it('loads again when a query arrives after the load at start failed', async () => {
    let failures = 1;
    // The built-in model, whose first load fails.
    const flaky: EmbeddingProvider = {
      ...builtinProvider,
      embed: async (texts) => {
        if (texts.length === 0 && failures-- > 0) throw new Error('the model could not be read');
        return builtinProvider.embed(texts);
      },
    };
    const h = await searchHarness('postgres', flaky);
    try {
      await h.ingest([epLoans]);
      await h.app.ready();
      expect(failures).toBe(0);
      const query = { semantic_search: 'central banks raising interest rates' };
      const { status, body } = await h.json(SEARCH, query);
      expect(status).toBe(200);
      expect(ids(body)).toEqual(['ep-loans']);
    } finally {
      await h.close();
    }
  }, 60_000);
});

describe('a re-sent transcript whose vectors are not replaced yet', () => {
  let h: SearchHarness;
  let api: EmbeddingsStandin;
  beforeAll(async () => {
    api = await startEmbeddingsStandin();
    const provider = openAiProvider({
      url: api.url,
      model: 'standin-a',
      apiKey: undefined,
      minSimilarity: 0.3,
    });
    h = await searchHarness('postgres', provider);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await api?.close();
  });

  it('never makes a result point at a line the transcript no longer has', async () => {
    await h.ingest([epRates, epLoans]);
    // The shorter version is refused by the API and parked: the index keeps the longer one's vectors.
    const shorter = episodeEvent({
      id: 'ep-rates',
      publishedAt: '2026-10-10T08:00:00Z',
      occurred_at: '2026-11-21T10:00:00Z',
      lines: ['POISON short.', 'Bye.'],
    });
    await h.ingest([shorter]);
    expect((await listParked(h.db, 'embedder:standin-a')).map((p) => p.streamId)).toEqual([
      expect.stringContaining('ep-rates'),
    ]);
    for (const sort of ['relevance', 'recency']) {
      const { status, body } = await h.json(SEARCH, {
        semantic_search: 'central banks raising interest rates',
        sort,
      });
      expect(status).toBe(200);
      expect(ids(body)).toEqual(['ep-loans']);
    }
  });
});
