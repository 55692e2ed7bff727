import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createKey } from '../../src/platform/keys.ts';
import { type FullApp, fullApp } from '../support/app.ts';
import { createTenant } from '../support/platform.ts';

let f: FullApp;
beforeAll(async () => {
  f = await fullApp({ env: { EARSHOT_RATE_LIMIT_PER_KEY: '3', EARSHOT_RATE_LIMIT_PER_IP: '2' } });
});
afterAll(async () => {
  await f.close();
});

type Injected = Awaited<ReturnType<FullApp['app']['inject']>>;

function expectLimited(response: Injected, limit: number) {
  expect(response.statusCode).toBe(429);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.json()).toMatchObject({ status: 429, error_code: 'rate_limit_exceeded', errors: null });
  const retryAfter = Number(response.headers['retry-after']);
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(response.headers['ratelimit-limit']).toBe(String(limit));
  expect(response.headers['ratelimit-remaining']).toBe('0');
  expect(Number(response.headers['ratelimit-reset'])).toBeGreaterThan(0);
}

describe('rate limits', () => {
  it('answer 429 with Retry-After and RateLimit headers once a key spends its limit; other keys go on', async () => {
    const alerts = (headers: Record<string, string>) =>
      f.app.inject({ url: `/v1/projects/${f.tenant.project.id}/alerts`, headers });
    const first = await alerts(f.tenant.headers);
    expect(first.statusCode).toBe(200);
    expect(first.headers['ratelimit-limit']).toBe('3');
    expect(first.headers['ratelimit-remaining']).toBe('2');
    await alerts(f.tenant.headers);
    await alerts(f.tenant.headers);
    expectLimited(await alerts(f.tenant.headers), 3);
    // The same key by another header form is the same caller.
    expectLimited(await alerts({ authorization: `Bearer ${f.tenant.key}` }), 3);

    const other = await createTenant(f.db);
    const response = await f.app.inject({
      url: `/v1/projects/${other.project.id}/alerts`,
      headers: other.headers,
    });
    expect(response.statusCode).toBe(200);
  });

  it('count ingest keys too', async () => {
    const key = (await createKey(f.db, { kind: 'ingest' })).key;
    const ingest = () =>
      f.app.inject({
        method: 'POST',
        url: '/v1/ingest/events',
        headers: { 'x-api-key': key },
        payload: { events: [] },
      });
    for (let i = 0; i < 3; i++) expect((await ingest()).statusCode).toBe(422);
    expectLimited(await ingest(), 3);
  });

  it('count public routes per client address; another address is unaffected', async () => {
    const disable = (remoteAddress: string) =>
      f.app.inject({ url: '/v1/alerts/disable?token=nothing', remoteAddress });
    expect((await disable('203.0.113.7')).statusCode).toBe(400);
    expect((await disable('203.0.113.7')).statusCode).toBe(400);
    expectLimited(await disable('203.0.113.7'), 2);
    expect((await disable('203.0.113.8')).statusCode).toBe(400);
  });

  it('leave /healthz, /readyz and /metrics alone', async () => {
    for (let i = 0; i < 5; i++)
      for (const url of ['/healthz', '/readyz', '/metrics']) {
        const response = await f.app.inject({ url, remoteAddress: '203.0.113.9' });
        expect(response.statusCode).toBe(200);
        expect(response.headers['ratelimit-limit']).toBeUndefined();
      }
  });

  it('are configured per minute, with defaults a normal client never meets, and 0 turns one off', () => {
    expect(loadConfig({}).rateLimit).toEqual({ perKey: 1200, perAddress: 300, windowMs: 60_000 });
    expect(loadConfig({ EARSHOT_RATE_LIMIT_PER_KEY: '0' }).rateLimit.perKey).toBe(0);
    expect(() => loadConfig({ EARSHOT_RATE_LIMIT_PER_IP: 'lots' })).toThrow(/EARSHOT_RATE_LIMIT_PER_IP/);
  });
});

describe('rate limits and MCP delegation', () => {
  // /mcp reads its credential itself, so it is counted per client address (docs/agents.md).
  const mcp = (headers: Record<string, string>, body: unknown) =>
    f.app.inject({
      method: 'POST',
      url: '/mcp',
      remoteAddress: '203.0.113.30',
      headers: {
        ...headers,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      payload: JSON.stringify(body),
    });
  const call = (id: number) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'earshot_podcast_resolve', arguments: { q: 'anything' } },
  });

  it('count an MCP POST once, however many route calls its tools make', async () => {
    // 2 per address here: three tools in one POST would spend it if their route calls counted.
    const tenant = await createTenant(f.db);
    const batch = await mcp(tenant.headers, [call(1), call(2), call(3)]);
    expect(batch.statusCode).toBe(200);
    expect(batch.headers['ratelimit-remaining']).toBe('1');
    const answers = batch.json() as { id: number; result?: { isError?: boolean } }[];
    expect(answers.map((a) => [a.id, a.result?.isError ?? false])).toEqual([
      [1, false],
      [2, false],
      [3, false],
    ]);
    const next = await mcp(tenant.headers, call(4));
    expect(next.statusCode).toBe(200);
    expect(next.headers['ratelimit-remaining']).toBe('0');
  });

  it('refuse a delegation header presented from outside, with or without a key, and count it', async () => {
    const tenant = await createTenant(f.db);
    for (const headers of [{}, tenant.headers]) {
      const forged = await f.app.inject({
        url: '/v1/podcasts',
        headers: { ...headers, 'x-earshot-delegation': 'forged.1' },
        remoteAddress: '203.0.113.20',
      });
      expect(forged.statusCode).toBe(401);
      expect(forged.headers['ratelimit-limit']).toBeDefined();
    }
  });
});
