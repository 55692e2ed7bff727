import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAiProvider } from '../../src/search/semantic/openai.ts';
import { agentsHarness, mcpPost } from '../agents/support.ts';
import { CENT, paidHarness } from '../payments/support.ts';
import { payerClient } from '../support/chain/payer.ts';
import { type EmbeddingsStandin, startEmbeddingsStandin } from '../support/embeddings-standin.ts';
import { createTenant } from '../support/platform.ts';
import { entities, epFox } from './fixture.ts';
import { type SearchHarness, searchHarness } from './support.ts';

// A caller has at most `concurrency` search requests running at once (docs/search.md, "Searches in
// flight"). A semantic search waits for the embeddings API to embed its text: the stand-in API
// holds the texts containing HELD unanswered, so those searches stay in flight for as long as a
// test needs.
const SEARCH = '/v1/podcasts/episodes/search';
const LIMIT = 2;

/** Waits until `check` holds, polling every 5 ms. */
async function until(check: () => boolean) {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('searches in flight per caller (postgres)', () => {
  let h: SearchHarness;
  let api: EmbeddingsStandin;
  let other: Record<string, string>;
  let texts = 0;

  beforeAll(async () => {
    api = await startEmbeddingsStandin();
    api.hold = 'HELD';
    const provider = openAiProvider({
      url: api.url,
      model: 'standin',
      apiKey: undefined,
      minSimilarity: 0.3,
    });
    h = await searchHarness('postgres', provider, { concurrency: LIMIT });
    await h.ingest([...entities, epFox]);
    other = (await createTenant(h.db)).headers;
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await api?.close();
  });

  /**
   * Starts `count` semantic searches (of the harness's project unless `get` says) that the API holds; resolves once
   * the API holds them all, or with undefined (nothing left running) when one was answered first.
   */
  async function hold(count: number, get = h.get): Promise<Promise<LightMyRequestResponse>[] | undefined> {
    const target = api.held() + count;
    let answered = false;
    const answers = Array.from({ length: count }, () =>
      get(SEARCH, { semantic_search: `HELD ${++texts}` }).finally(() => {
        answered = true;
      }),
    );
    await until(() => api.held() === target || answered);
    if (api.held() === target) return answers;
    // One was answered (429) first: the others may not have reached the API yet; answer them all.
    api.hold = undefined;
    api.release();
    await Promise.all(answers);
    api.hold = 'HELD';
    return undefined;
  }

  /** Answers the held searches: each succeeds. */
  async function finish(answers: Promise<LightMyRequestResponse>[]) {
    api.release();
    expect((await Promise.all(answers)).map((r) => r.statusCode)).toEqual(answers.map(() => 200));
  }

  it("refuses a caller's request past the limit on each search route with 429 and Retry-After, while another project's search answers", async () => {
    const running = await hold(LIMIT);
    expect(running).toBeDefined();
    const refused = [
      await h.get(SEARCH, { keyword_search: 'fox' }),
      await h.get(SEARCH, { semantic_search: 'a fox' }),
      await h.get('/v1/podcasts/episodes/timeseries', { keyword_search: 'fox' }),
      await h.get('/v1/podcasts/mentions', { entity_id: 'ent-nvidia' }),
      await h.get('/v1/podcasts/mentions/timeseries', { entity_id: 'ent-nvidia' }),
    ];
    for (const response of refused) {
      expect(response.statusCode).toBe(429);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.headers['retry-after']).toBe('1');
      expect(response.json()).toMatchObject({ status: 429, error_code: 'rate_limit_exceeded', errors: null });
    }
    const otherProject = await h.app.inject({
      url: SEARCH,
      query: { keyword_search: 'fox' },
      headers: other,
    });
    expect(otherProject.statusCode).toBe(200);
    expect(otherProject.json().data.map((i: { episode: { id: string } }) => i.episode.id)).toEqual([
      'ep-fox',
    ]);
    // At that moment the project's searches were still running.
    expect(api.held()).toBe(LIMIT);
    await finish(running!);
    // Released on success: the project runs LIMIT searches at once again.
    const again = await hold(LIMIT);
    expect(again).toBeDefined();
    await finish(again!);
  });

  it('releases the slot of a request that failed', async () => {
    api.failWith = 503;
    for (let i = 0; i <= LIMIT; i++) {
      const failed = await h.get(SEARCH, { semantic_search: `failing ${++texts}` });
      expect(failed.json()).toMatchObject({ status: 503, error_code: 'embeddings_unavailable' });
    }
    api.failWith = undefined;
    // Before the parameters are valid no slot is taken; a 400 leaves none behind either.
    expect((await h.get(SEARCH, { limit: '0' })).statusCode).toBe(400);
    const again = await hold(LIMIT);
    expect(again).toBeDefined();
    await finish(again!);
  });

  it('keeps the slot of a request whose client went away until its work ends, then releases it', async () => {
    const url = await h.app.listen({ port: 0, host: '127.0.0.1' });
    const { headers } = await createTenant(h.db);
    const get = (url: string, query: Record<string, string>) => h.app.inject({ url, query, headers });
    const client = new AbortController();
    const gone = fetch(`${url}${SEARCH}?semantic_search=HELD+gone`, { headers, signal: client.signal });
    await until(() => api.held() === 1);
    client.abort();
    await expect(gone).rejects.toThrow(/abort/i);
    // Its statements and its call to the API still run: its slot still counts.
    const kept = await hold(1, get);
    expect(kept).toBeDefined();
    expect((await get(SEARCH, { keyword_search: 'fox' })).statusCode).toBe(429);
    await finish(kept!);
    // Once the abandoned search has ended, the project has its LIMIT slots again.
    let again: Promise<LightMyRequestResponse>[] | undefined;
    for (const end = Date.now() + 10_000; again === undefined && Date.now() < end; )
      again = await hold(LIMIT, get);
    expect(again).toBeDefined();
    await finish(again!);
  });
});

describe('searches in flight through the whole app: MCP tools and x402 payers', () => {
  let api: EmbeddingsStandin;
  beforeAll(async () => {
    api = await startEmbeddingsStandin();
    api.hold = 'HELD';
  });
  afterAll(() => api?.close());
  const env = () => ({
    EARSHOT_EMBEDDINGS_URL: api.url,
    EARSHOT_EMBEDDINGS_MODEL: 'standin',
    EARSHOT_SEARCH_PROJECT_CONCURRENCY: '1',
  });

  it("counts an MCP tool's search in its caller's project, with the REST searches", async () => {
    const h = await agentsHarness(env());
    try {
      const tool = (headers: Record<string, string>, args: object) =>
        mcpPost(
          h.mcpUrl,
          {
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'earshot_search_transcripts', arguments: args },
          },
          headers,
        ).then(
          async (r) =>
            ((await r.json()) as { result: { isError?: boolean; structuredContent: object } }).result,
        );
      const rest = (headers: Record<string, string>, query: string) =>
        fetch(`${h.url}${SEARCH}?${query}`, { headers });
      const other = await createTenant(h.db);

      const held = rest(h.tenant.headers, 'semantic_search=HELD+rest');
      await until(() => api.held() === 1);
      expect(await tool(h.tenant.headers, { keyword_search: 'fox' })).toMatchObject({
        isError: true,
        content: [
          { type: 'text', text: expect.stringMatching(/^rate_limit_exceeded: .* Retry after 1 s\.$/) },
        ],
        // The route's Retry-After header, which a tool result cannot carry.
        structuredContent: { status: 429, error_code: 'rate_limit_exceeded', retry_after_seconds: 1 },
      });
      expect((await tool(other.headers, { keyword_search: 'fox' })).isError).toBeUndefined();
      api.release();
      expect((await held).status).toBe(200);

      const heldTool = tool(h.tenant.headers, { semantic_search: 'HELD tool' });
      await until(() => api.held() === 1);
      const refused = await rest(h.tenant.headers, 'keyword_search=fox');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('1');
      api.release();
      expect((await heldTool).isError).toBeUndefined();
      expect((await rest(h.tenant.headers, 'keyword_search=fox')).status).toBe(200);
    } finally {
      await h.close();
    }
  });

  it("shares the caller's slots with podcast, entity, people and company searches; their lists without q take none", async () => {
    const h = await agentsHarness(env());
    try {
      const get = (headers: Record<string, string>, url: string) => fetch(`${h.url}${url}`, { headers });
      const searches = [
        '/v1/podcasts?q=fox',
        '/v1/podcasts/search?q=fox',
        '/v1/entities/search?q=nvidia',
        '/v1/people?q=jensen',
        '/v1/companies?q=nvidia',
      ];
      const lists = ['/v1/podcasts', '/v1/podcasts/search?language=en', '/v1/people', '/v1/companies'];
      const other = await createTenant(h.db);
      const held = get(h.tenant.headers, `${SEARCH}?semantic_search=HELD+catalog`);
      await until(() => api.held() === 1);
      for (const url of searches) {
        const refused = await get(h.tenant.headers, url);
        expect(refused.status, url).toBe(429);
        expect(refused.headers.get('retry-after'), url).toBe('1');
        expect(await refused.json(), url).toMatchObject({ status: 429, error_code: 'rate_limit_exceeded' });
        expect((await get(other.headers, url)).status, url).toBe(200);
      }
      for (const url of lists) expect((await get(h.tenant.headers, url)).status, url).toBe(200);
      api.release();
      expect((await held).status).toBe(200);
      for (const url of searches) expect((await get(h.tenant.headers, url)).status, url).toBe(200);
    } finally {
      await h.close();
    }
  });

  it('counts a paid call by its payer address: a second payer and a project key are not refused, the refused call is not charged', async () => {
    const h = await paidHarness(env());
    try {
      const other = payerClient(h.chain, h.chain.payers[1]!);
      await h.chain.mint(other.account.address, 100n * CENT);
      const paid = async (payer: typeof h.payer, query: string) => {
        const url = `${SEARCH}?${query}`;
        const challenge = await h.get(url);
        expect(challenge.status).toBe(402);
        return h.get(url, await payer.sign(payer.required(challenge, await challenge.json())));
      };
      const held = paid(h.payer, 'semantic_search=HELD+paid');
      await until(() => api.held() === 1);
      const before = await h.balance();
      const refused = await paid(h.payer, 'keyword_search=fox');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(await refused.json()).toMatchObject({ error_code: 'rate_limit_exceeded' });
      // The same payer's paid MCP tool call: refused as a tool result, and not charged either.
      const call = {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'earshot_search_transcripts', arguments: { keyword_search: 'fox' } },
      };
      const keyless = await mcpPost(`${h.url}/mcp`, call);
      expect(keyless.status).toBe(402);
      const tool = await mcpPost(
        `${h.url}/mcp`,
        call,
        await h.payer.sign(h.payer.required(keyless, await keyless.json())),
      );
      expect(tool.status).toBe(200);
      expect(tool.headers.get('payment-response')).toBeNull();
      expect(((await tool.json()) as { result: object }).result).toMatchObject({
        isError: true,
        structuredContent: { status: 429, error_code: 'rate_limit_exceeded', retry_after_seconds: 1 },
      });
      expect(await h.balance()).toBe(before);
      expect((await paid(other, 'keyword_search=fox')).status).toBe(200);
      expect((await h.get(`${SEARCH}?keyword_search=fox`, h.tenant.headers)).status).toBe(200);
      api.release();
      expect((await held).status).toBe(200);
      expect((await paid(h.payer, 'keyword_search=fox')).status).toBe(200);
    } finally {
      await h.close();
    }
  }, 120_000);
});
