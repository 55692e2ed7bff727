import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callRoute } from '../../src/agents/route-call.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { createLogger } from '../../src/service.ts';
import { agentsHarness, mcpPost } from '../agents/support.ts';
import { createTestDb, type TestDb } from '../support/db.ts';

describe('request logs', () => {
  let testDb: TestDb;
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });

  beforeAll(async () => {
    testDb = await createTestDb();
  });
  afterAll(async () => {
    await testDb.drop();
  });

  it('never carry an API key or a disable token given in the query string', async () => {
    const app = await buildHttpApp({
      db: testDb.db,
      cursorKey: Buffer.alloc(32),
      routes: [],
      logger: createLogger({ logLevel: 'info' }, sink),
    });
    try {
      const secretKey = `ek_${'A'.repeat(16)}_${'s'.repeat(40)}`;
      await app.inject({ url: `/v1/anything?limit=5&api-key=${secretKey}` });
      await app.inject({ url: '/v1/alerts/disable?token=very-secret-token' });
      const logged = lines.join('\n');
      expect(logged).toContain('api-key=[redacted]');
      expect(logged).toContain('token=[redacted]');
      expect(logged).toContain('limit=5');
      expect(logged).not.toContain(secretKey);
      expect(logged).not.toContain('very-secret-token');
    } finally {
      await app.close();
    }
  });

  it("leave out an MCP tool's route pass, which its /mcp request logs, but not its errors", async () => {
    lines.length = 0;
    const app = await buildHttpApp({
      db: testDb.db,
      cursorKey: Buffer.alloc(32),
      routes: [
        async (routes: FastifyInstance) => {
          routes.get('/v1/things/:id', async (request) => request.params);
          routes.get('/v1/broken', async () => {
            throw new Error('it broke');
          });
        },
      ],
      logger: createLogger({ logLevel: 'info' }, sink),
    });
    const delegated = (url: string) => {
      const delegation = app.delegate({ keyId: 'k', kind: 'project', projectId: 'p', organizationId: 'o' });
      return callRoute(app, {
        method: 'GET',
        url,
        headers: { ...delegation.headers, host: 'localhost', 'x-request-id': 'tool-call' },
      }).finally(() => delegation.release());
    };
    const logged = () =>
      lines.map((line) => JSON.parse(line) as { reqId?: string; msg: string; level: number });
    try {
      await app.ready();
      expect((await delegated('/v1/things/one')).statusCode).toBe(200);
      expect((await delegated('/v1/broken')).statusCode).toBe(500);
      expect(logged().map((line) => [line.reqId, line.msg])).toEqual([['tool-call', 'request failed']]);

      // Any other request logs its two lines, a forged delegation included.
      lines.length = 0;
      await app.inject({ url: '/v1/things/two', headers: { 'x-request-id': 'rest' } });
      await app.inject({
        url: '/v1/things/three',
        headers: { 'x-request-id': 'forged', 'x-earshot-delegation': 'guessed.1' },
      });
      expect(logged().map((line) => [line.reqId, line.msg])).toEqual([
        ['rest', 'incoming request'],
        ['rest', 'request completed'],
        ['forged', 'incoming request'],
        ['forged', 'request completed'],
      ]);
    } finally {
      await app.close();
    }
  });

  it("name an MCP request's tool route calls on its own 'request completed' line", async () => {
    lines.length = 0;
    const h = await agentsHarness({}, createLogger({ logLevel: 'info' }, sink));
    try {
      const call = (id: number, name: string, args: object) => ({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name, arguments: args },
      });
      const answer = await mcpPost(
        h.mcpUrl,
        [
          call(1, 'earshot_podcast_get', { id: 'no-such-show' }),
          call(2, 'earshot_alert_list', {}),
          // Refused by the tool layer: no route is called.
          call(3, 'earshot_podcast_get', { nope: 1 }),
        ],
        { ...h.tenant.headers, 'x-request-id': 'mcp-batch' },
      );
      expect(answer.status).toBe(200);
      const mine = lines
        .map((line) => JSON.parse(line) as { reqId?: string; msg: string; tool_calls?: unknown })
        .filter((line) => line.reqId === 'mcp-batch');
      expect(mine.map((line) => line.msg)).toEqual(['incoming request', 'request completed']);
      expect(mine[0]!.tool_calls).toBeUndefined();
      // In the order the calls ended: a batch's calls run at once.
      expect(mine[1]!.tool_calls).toHaveLength(2);
      expect(mine[1]!.tool_calls).toEqual(
        expect.arrayContaining([
          { tool: 'earshot_podcast_get', route: 'GET /v1/podcasts/:id', status: 404 },
          { tool: 'earshot_alert_list', route: 'GET /v1/projects/:projectId/alerts', status: 200 },
        ]),
      );
    } finally {
      await h.close();
    }
  });
});
