import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ClientRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TOOL_TABLE } from '../../src/agents/tool-table.ts';
import { buildTools } from '../../src/agents/tools.ts';
import { makeAjv } from '../../src/http/validation.ts';
import { createKey } from '../../src/platform/keys.ts';
import { verifyEmail } from '../../src/platform/organizations.ts';
import { alertBody, projectAlerts, seedEntity } from '../alerts/support.ts';
import { episodeOf, podcastEvent } from '../catalog/support.ts';
import { createTenant } from '../support/platform.ts';
import { type AgentsHarness, agentsHarness, mcpPost } from './support.ts';

let h: AgentsHarness;
let alertId: string;

beforeAll(async () => {
  h = await agentsHarness();
  await seedEntity(h.db);
  await h.ingest([
    podcastEvent({ id: 'pod-1', title: 'Chip Talk', slug: 'chip-talk' }),
    episodeOf({
      id: 'ep-1',
      podcastId: 'pod-1',
      podcastTitle: 'Chip Talk',
      roles: ['HOST', 'GUEST'],
      extra: {
        clips: [
          { id: 'clip-1', title: 'The good part', start_seconds: 0, end_seconds: 10, engagement_score: 80 },
        ],
      },
    }),
  ]);
  await verifyEmail(h.db, h.tenant.organization.id, 'ops@example.com');
  const created = await h.app.inject({
    method: 'POST',
    url: `/v1/projects/${h.tenant.project.id}/alerts`,
    headers: h.tenant.headers,
    payload: alertBody(),
  });
  expect(created.statusCode).toBe(200);
  alertId = created.json().id;
  // A reader of the store sees an event once every older transaction on the server has ended
  // (docs/event-store.md); on a busy shared server that can take a few passes.
  await vi.waitFor(
    async () => {
      await projectAlerts(h.db, h.store);
      const listed = await h.app.inject({
        url: `/v1/projects/${h.tenant.project.id}/alerts`,
        headers: h.tenant.headers,
      });
      expect(listed.json().data).toHaveLength(1);
    },
    { timeout: 10_000, interval: 100 },
  );
});
afterAll(() => h.close());

async function connect(headers: Record<string, string> = h.tenant.headers, query = '') {
  const client = new Client({ name: 'earshot-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${h.mcpUrl}${query}`), { requestInit: { headers } }),
  );
  return client;
}

const post = (
  headers: Record<string, string>,
  body: object = { jsonrpc: '2.0', id: 1, method: 'tools/list' },
) => mcpPost(h.mcpUrl, body, headers);

/** Arguments for each tool, and the REST request the same call makes. */
const calls = (): Record<
  string,
  { args: Record<string, unknown>; rest: { method: string; url: string; payload?: object } }
> => ({
  earshot_entity_resolve: {
    args: { q: 'Name of' },
    rest: { method: 'GET', url: '/v1/entities/search?q=Name%20of' },
  },
  earshot_podcast_resolve: {
    args: { q: 'chip talk' },
    rest: { method: 'GET', url: '/v1/podcasts/search?q=chip%20talk' },
  },
  earshot_podcast_get: { args: { id: 'chip-talk' }, rest: { method: 'GET', url: '/v1/podcasts/chip-talk' } },
  earshot_podcast_list_episodes: {
    args: { id: 'pod-1', limit: 5 },
    rest: { method: 'GET', url: '/v1/podcasts/pod-1/episodes?limit=5' },
  },
  earshot_episode_get: {
    args: { id: 'ep-1', include: 'speakers,clips' },
    rest: { method: 'GET', url: '/v1/podcasts/episodes/ep-1?include=speakers,clips' },
  },
  earshot_list_clips: {
    args: { podcast_id: 'pod-1' },
    rest: { method: 'GET', url: '/v1/podcasts/clips?podcast_id=pod-1' },
  },
  earshot_alert_list: {
    args: {},
    rest: { method: 'GET', url: `/v1/projects/${h.tenant.project.id}/alerts` },
  },
  earshot_alert_list_matches: {
    args: { id: alertId },
    rest: { method: 'GET', url: `/v1/alerts/${alertId}/matches` },
  },
  earshot_alert_list_deliveries: {
    args: { id: alertId },
    rest: { method: 'GET', url: `/v1/alerts/${alertId}/deliveries` },
  },
  earshot_alert_create: {
    args: alertBody({ title: 'Second watch' }),
    rest: {
      method: 'POST',
      url: `/v1/projects/${h.tenant.project.id}/alerts`,
      payload: alertBody({ title: 'Third watch' }),
    },
  },
  earshot_alert_preview: {
    args: { mode: 'start', entities: [{ entity_type: 'PERSON', entity_id: 'ent-jensen' }], window_days: 3 },
    rest: {
      method: 'POST',
      url: `/v1/projects/${h.tenant.project.id}/alerts/preview?window_days=3`,
      payload: { entities: [{ entity_type: 'PERSON', entity_id: 'ent-jensen' }] },
    },
  },
});

/** What differs between two identical requests: the request id, what a write creates, a preview's progress. */
const comparable = (body: unknown) =>
  JSON.parse(
    JSON.stringify(body, (key, value) =>
      [
        'instance',
        'id',
        'title',
        'created_at',
        'updated_at',
        'started_at',
        'preview_id',
        'expires_at',
        'status',
      ].includes(key) && typeof value === 'string'
        ? '*'
        : value,
    ),
  );

describe('the MCP tools', () => {
  it('serves a tool exactly when its REST route exists in the app', async () => {
    const client = await connect();
    const served = (await client.listTools()).tools.map((tool) => tool.name);
    for (const spec of TOOL_TABLE) {
      const routes = ('method' in spec.route ? [spec.route] : Object.values(spec.route)) as {
        method: 'GET' | 'POST';
        path: string;
      }[];
      const exists = routes.some((route) =>
        h.app.hasRoute({ method: route.method, url: route.path as string }),
      );
      expect(served.includes(spec.name), spec.name).toBe(exists);
    }
    expect(served.slice(0, 2)).toEqual(['earshot_catalog', 'earshot_call']);
    await client.close();
  });

  it('gives every tool a JSON Schema input built from its route: required path ids, limits, no extras', async () => {
    const client = await connect();
    const tools = new Map((await client.listTools()).tools.map((tool) => [tool.name, tool.inputSchema]));
    expect(tools.get('earshot_podcast_list_episodes')).toMatchObject({
      type: 'object',
      required: ['id'],
      additionalProperties: false,
      properties: { limit: { type: 'integer', minimum: 1, maximum: 100, default: 25 } },
    });
    expect(tools.get('earshot_alert_create')?.required).toEqual(['title', 'entities', 'notifications']);
    expect(tools.get('earshot_alert_preview')?.properties?.mode).toMatchObject({ enum: ['start', 'result'] });
    expect(tools.get('earshot_alert_preview')?.properties?.window_days).toMatchObject({
      minimum: 1,
      maximum: 30,
    });
    await client.close();
  });

  it('answers the served tools of its fixtures through the SDK client, with the body their REST route answers', async () => {
    const client = await connect();
    const fixtures = calls();
    for (const tool of (await client.listTools()).tools) {
      if (tool.name === 'earshot_catalog' || tool.name === 'earshot_call') continue;
      const fixture = fixtures[tool.name];
      // Every tool in every mode, on a fuller catalog: mcp-every-tool.test.ts.
      if (!fixture) continue;
      const result = await client.callTool({ name: tool.name, arguments: fixture.args });
      expect(result.content, tool.name).toEqual([{ type: 'text', text: expect.any(String) }]);
      expect(result.isError, `${tool.name}: ${JSON.stringify(result.structuredContent)}`).toBeFalsy();
      const rest = await h.app.inject({ ...fixture.rest, headers: h.tenant.headers } as never);
      expect(rest.statusCode, tool.name).toBeLessThan(300);
      expect(comparable(result.structuredContent), tool.name).toEqual(comparable(rest.json()));
    }
    await client.close();
  });

  it('reports a failing call as isError with the REST error_code', async () => {
    const client = await connect();
    const missing = await client.callTool({ name: 'earshot_podcast_get', arguments: { id: 'no-such-show' } });
    expect(missing.isError).toBe(true);
    expect(missing.structuredContent).toMatchObject({ status: 404, error_code: 'podcast_not_found' });
    expect(missing.content).toEqual([{ type: 'text', text: 'podcast_not_found: No podcast no-such-show.' }]);
    const tooMany = await client.callTool({
      name: 'earshot_podcast_list_episodes',
      arguments: { id: 'pod-1', limit: 1000 },
    });
    expect(tooMany.structuredContent).toMatchObject({ error_code: 'invalid_parameter' });
    const unknown = await client.callTool({
      name: 'earshot_podcast_get',
      arguments: { id: 'pod-1', colour: 'red' },
    });
    expect(unknown.structuredContent).toMatchObject({ error_code: 'invalid_parameter' });
    const include = await client.callTool({
      name: 'earshot_episode_get',
      arguments: { id: 'ep-1', include: 'gossip' },
    });
    expect(include.structuredContent).toMatchObject({ error_code: 'invalid_parameter' });
    const otherProject = await client.callTool({
      name: 'earshot_alert_list',
      arguments: { project_id: 'prj-other' },
    });
    expect(otherProject.structuredContent).toMatchObject({ error_code: 'project_forbidden' });
    const noMode = await client.callTool({ name: 'earshot_alert_preview', arguments: {} });
    expect(noMode.isError).toBe(true);
    await client.close();
  });

  it("checks arguments against the tool's inputSchema before its route runs, naming each argument", async () => {
    const client = await connect();
    type Problem = { error_code: string; detail: string; errors: { location: string; message: string }[] };
    const refused = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      const problem = result.structuredContent as Problem;
      expect(problem.error_code).toBe('invalid_parameter');
      return problem.errors.map(({ location, message }) => ({ location, message }));
    };
    expect(await refused('earshot_podcast_resolve', { q: { a: 1 } })).toEqual([
      { location: 'arguments.q', message: 'must be string' },
    ]);
    for (const id of [['pod-1', 'x'], true, 7, null, ''])
      expect((await refused('earshot_podcast_get', { id }))[0]?.location).toBe('arguments.id');
    expect(await refused('earshot_podcast_get', {})).toEqual([
      { location: 'arguments.id', message: "must have required property 'id'" },
    ]);
    expect(await refused('earshot_podcast_get', { id: 'pod-1', colour: 'red', toString: 1 })).toEqual([
      { location: 'arguments.colour', message: 'is not an argument of this tool' },
      { location: 'arguments.toString', message: 'is not an argument of this tool' },
    ]);
    expect(await refused('earshot_podcast_list_episodes', { id: 'pod-1', limit: '5' })).toEqual([
      { location: 'arguments.limit', message: 'must be integer' },
    ]);
    expect(
      await refused('earshot_alert_preview', { mode: 'start', entities: [{ entity_type: 'PERSON' }] }),
    ).toEqual([
      { location: 'arguments.entities.0.entity_id', message: "must have required property 'entity_id'" },
    ]);
    // Through earshot_call too, and a valid call still reaches its route.
    const viaCall = await client.callTool({
      name: 'earshot_call',
      arguments: { name: 'earshot_podcast_get', arguments: { id: true } },
    });
    expect(viaCall.structuredContent).toMatchObject({
      error_code: 'invalid_parameter',
      errors: [{ location: 'arguments.id', message: 'must be string', value: true }],
    });
    const valid = await client.callTool({ name: 'earshot_podcast_get', arguments: { id: 'pod-1' } });
    expect(valid.structuredContent).toMatchObject({ id: 'pod-1' });
    await client.close();
  });

  it('takes only a mode the tool has: toString, __proto__ or constructor are invalid_parameter', async () => {
    for (const mode of ['toString', '__proto__', 'constructor', 'hasOwnProperty', '']) {
      const response = await post(h.tenant.headers, {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'earshot_get_rankings', arguments: { mode } },
      });
      const body = (await response.json()) as { result?: { isError: boolean; structuredContent: object } };
      expect(body.result, mode).toMatchObject({
        isError: true,
        structuredContent: {
          error_code: 'invalid_parameter',
          errors: [{ location: 'arguments.mode', message: 'must be one of chart, movers, history' }],
        },
      });
    }
  });

  it("takes, for an argument the modes of a tool type differently, a value any mode's route takes", async () => {
    const [tool] = buildTools(h.app, [
      {
        name: 'earshot_two_ids',
        set: 'podcasts',
        description: 'Two routes whose id differ: at most 200 characters, at most 64.',
        route: {
          podcast: { method: 'GET', path: '/v1/podcasts/:id' },
          alert: { method: 'GET', path: '/v1/alerts/:id/matches' },
        },
      },
    ]);
    expect(tool?.inputSchema.properties.id).toMatchObject({
      anyOf: [{ maxLength: 200 }, { maxLength: 64 }],
    });
    const validate = makeAjv({ coerceTypes: false, useDefaults: false }).compile(tool!.inputSchema);
    expect(validate({ mode: 'podcast', id: 'p'.repeat(100) })).toBe(true);
    expect(validate({ mode: 'podcast', id: 'p'.repeat(201) })).toBe(false);
  });

  it('gives every tool an inputSchema that ajv compiles in strict mode', async () => {
    const client = await connect();
    const strict = makeAjv({ strict: true, strictTypes: false });
    for (const tool of (await client.listTools()).tools)
      expect(() => strict.compile(tool.inputSchema), tool.name).not.toThrow();
    await client.close();
  });

  it('earshot_catalog lists every tool and earshot_call reaches one this connection leaves out', async () => {
    const client = await connect(h.tenant.headers, '?include=alerts');
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(
      names.every(
        (name) => name.startsWith('earshot_alert_') || ['earshot_catalog', 'earshot_call'].includes(name),
      ),
    ).toBe(true);
    const catalog = await client.callTool({ name: 'earshot_catalog', arguments: {} });
    const listed = (catalog.structuredContent as { tools: { name: string; served_here: boolean }[] }).tools;
    expect(listed.find((tool) => tool.name === 'earshot_podcast_get')).toMatchObject({ served_here: false });
    expect(listed.find((tool) => tool.name === 'earshot_alert_list')).toMatchObject({ served_here: true });
    const direct = await client.callTool({ name: 'earshot_podcast_get', arguments: { id: 'pod-1' } });
    expect(direct.isError).toBe(true);
    const viaCall = await client.callTool({
      name: 'earshot_call',
      arguments: { name: 'earshot_podcast_get', arguments: { id: 'pod-1' } },
    });
    expect(viaCall.isError).toBeFalsy();
    expect(viaCall.structuredContent).toMatchObject({ id: 'pod-1', title: 'Chip Talk' });
    await client.close();
  });

  it('chooses tool sets with ?include= and ?exclude=, and refuses an unknown set', async () => {
    const client = await connect(h.tenant.headers, '?exclude=alerts,resolve');
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('earshot_podcast_get');
    expect(names.some((name) => name.startsWith('earshot_alert_') || name.endsWith('_resolve'))).toBe(false);
    await client.close();
    const unknown = await fetch(`${h.mcpUrl}?include=gossip`, {
      method: 'POST',
      headers: {
        ...h.tenant.headers,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ error_code: 'invalid_parameter' });
  });

  it('serves every set on a plain /mcp however narrow the connections before it, and names an unknown tool', async () => {
    const listed = async (query: string) => {
      const client = await connect(h.tenant.headers, query);
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      await client.close();
      return names;
    };
    const every = await listed('');
    expect(every).toContain('earshot_alert_list');
    for (const query of ['?exclude=alerts,resolve,podcasts,advertising', '?include=', '?include=alerts']) {
      expect((await listed(query)).length).toBeLessThan(every.length);
      expect(await listed('')).toEqual(every);
    }
    const refused = await fetch(`${h.mcpUrl}?exclude=alerts,gossip`, {
      method: 'POST',
      headers: { ...h.tenant.headers, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      error_code: 'invalid_parameter',
      errors: [{ value: 'gossip' }],
    });
    expect(await listed('')).toEqual(every);

    const client = await connect(h.tenant.headers, '?include=alerts');
    const problem = (result: Awaited<ReturnType<Client['callTool']>>) =>
      result.structuredContent as { error_code: string; errors: { location: string; message: string }[] };
    const direct = await client.callTool({ name: 'earshot_nope', arguments: {} });
    expect(direct.isError).toBe(true);
    expect(problem(direct)).toMatchObject({
      error_code: 'invalid_parameter',
      errors: [{ location: 'name', message: 'is not a served tool' }],
    });
    for (const name of ['earshot_nope', 42, 'earshot_catalog', 'earshot_call', 'constructor']) {
      const viaCall = await client.callTool({ name: 'earshot_call', arguments: { name, arguments: {} } });
      expect(viaCall.isError).toBe(true);
      expect(problem(viaCall)).toMatchObject({
        error_code: 'invalid_parameter',
        errors: [{ location: 'arguments.name', message: 'is not a tool' }],
      });
    }
    await client.close();
  });
});

describe('the MCP endpoint', () => {
  it('takes a key as Authorization: Bearer as well as X-API-Key', async () => {
    const client = await connect({ authorization: `Bearer ${h.tenant.key}` });
    expect((await client.listTools()).tools.length).toBeGreaterThan(2);
    await client.close();
  });

  it('answers 401 with the discovery challenge without a credential or with a bad one', async () => {
    const attempts: Record<string, string>[] = [
      {},
      { 'x-api-key': 'ek_nope' },
      { authorization: 'Bearer not.a.jwt' },
    ];
    for (const headers of attempts) {
      const response = await post(headers);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe(
        `Bearer realm="mcp", error="invalid_token", resource_metadata="${h.url}/.well-known/oauth-protected-resource"`,
      );
      expect(await response.json()).toMatchObject({ error_code: 'unauthorized' });
    }
  });

  it('refuses an ingest key', async () => {
    const ingest = await createKey(h.db, { kind: 'ingest' });
    const response = await post({ 'x-api-key': ingest.key });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error_code: 'project_key_required' });
  });

  it('refuses a foreign Host or Origin (DNS rebinding) and accepts its own', async () => {
    const evilHost = await h.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { ...h.tenant.headers, host: 'attacker.example', 'content-type': 'application/json' },
      payload: { jsonrpc: '2.0', id: 1, method: 'ping' },
    });
    expect(evilHost.statusCode).toBe(403);
    expect(evilHost.json()).toMatchObject({ error_code: 'invalid_host' });
    expect((await post({ ...h.tenant.headers, origin: 'https://attacker.example' })).status).toBe(403);
    expect((await post({ ...h.tenant.headers, origin: h.url })).status).toBe(200);
  });

  it('answers GET with 405: the server is stateless and opens no stream', async () => {
    const response = await fetch(h.mcpUrl, { headers: { ...h.tenant.headers, accept: 'text/event-stream' } });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('answers ping and keeps no session', async () => {
    const response = await post(h.tenant.headers, { jsonrpc: '2.0', id: 7, method: 'ping' });
    expect(response.status).toBe(200);
    expect(response.headers.get('mcp-session-id')).toBeNull();
    expect(await response.json()).toEqual({ jsonrpc: '2.0', id: 7, result: {} });
  });
});

describe('one MCP server for every POST', () => {
  const call = (id: number | string, name: string, args: object = {}) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: args },
  });

  it('answers concurrent POSTs that reuse a request id each with its own caller and id', async () => {
    const other = await createTenant(h.db);
    const answers = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const tenant = i % 2 ? other : h.tenant;
        const response = await post(tenant.headers, call(1, 'earshot_alert_list'));
        return {
          tenant,
          body: (await response.json()) as { id: number; result: { structuredContent: { data: unknown[] } } },
        };
      }),
    );
    for (const { tenant, body } of answers) {
      expect(body.id).toBe(1);
      const alerts = body.result.structuredContent.data as { project_id: string }[];
      expect(alerts.every((alert) => alert.project_id === tenant.project.id)).toBe(true);
      expect(alerts.length).toBe(tenant === h.tenant ? 1 : 0);
    }
  });

  it('answers every tools/call without the SDK dispatch, and the rest through it', async () => {
    // Where the SDK's Protocol hands every request it dispatches to its handlers (docs/agents.md,
    // "How a call runs"): seen for tools/list, never for a tools/call, well-formed or not.
    const dispatch = vi.spyOn(
      Protocol.prototype as unknown as { _onrequest(...args: unknown[]): void },
      '_onrequest',
    );
    try {
      const listed = await post(h.tenant.headers, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(listed.status).toBe(200);
      expect(dispatch).toHaveBeenCalledTimes(1);
      dispatch.mockClear();
      const called = await post(h.tenant.headers, call(2, 'earshot_alert_list'));
      expect(await called.json()).toMatchObject({
        id: 2,
        result: { structuredContent: { data: [expect.anything()] } },
      });
      const malformed = await post(h.tenant.headers, {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: {},
      });
      expect(await malformed.json()).toMatchObject({ id: 3, error: { code: -32602 } });
      expect(dispatch).not.toHaveBeenCalled();
    } finally {
      dispatch.mockRestore();
    }
  });

  it('answers a batch in request order with the client ids, and a POST of notifications with 202', async () => {
    const batch = await post(h.tenant.headers, [
      call('b', 'earshot_alert_list'),
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'b' } },
      { jsonrpc: '2.0', id: 'a', method: 'ping' },
    ] as never);
    expect(batch.status).toBe(200);
    const [first, second] = (await batch.json()) as unknown[];
    expect(first).toMatchObject({ id: 'b', result: { structuredContent: { data: [expect.anything()] } } });
    expect(second).toEqual({ jsonrpc: '2.0', id: 'a', result: {} });
    const notified = await post(h.tenant.headers, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(notified.status).toBe(202);
    expect(await notified.text()).toBe('');
  });

  it('refuses what the SDK transport refuses, with its status and JSON-RPC error', async () => {
    const refused = async (response: Response) => ({
      status: response.status,
      code: ((await response.json()) as { error: { code: number } }).error.code,
    });
    const jsonOnly = await fetch(h.mcpUrl, {
      method: 'POST',
      headers: { ...h.tenant.headers, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(await refused(jsonOnly)).toEqual({ status: 406, code: -32000 });
    const form = await fetch(h.mcpUrl, {
      method: 'POST',
      headers: {
        ...h.tenant.headers,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json, text/event-stream',
      },
      body: 'jsonrpc=2.0',
    });
    expect(await refused(form)).toEqual({ status: 415, code: -32000 });
    expect(await refused(await post(h.tenant.headers, { jsonrpc: '2.0', id: 1 }))).toEqual({
      status: 400,
      code: -32700,
    });
    // Malformed params with no id to answer them by, or with a malformed id too: the whole POST.
    for (const message of [
      { jsonrpc: '2.0', method: 'notifications/initialized', params: 'x' },
      { jsonrpc: '2.0', id: 1.5, method: 'ping', params: 'x' },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: 'x', extra: true },
    ])
      expect(await refused(await post(h.tenant.headers, message))).toEqual({ status: 400, code: -32700 });
    const initialize = {
      jsonrpc: '2.0',
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    expect(
      await refused(
        await post(h.tenant.headers, [
          { ...initialize, id: 1 },
          { ...initialize, id: 2 },
        ] as never),
      ),
    ).toEqual({ status: 400, code: -32600 });
    expect(await refused(await post({ ...h.tenant.headers, 'mcp-protocol-version': '1999-01-01' }))).toEqual({
      status: 400,
      code: -32000,
    });
    const tooMany = Array.from({ length: 101 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'ping' }));
    expect(await refused(await post(h.tenant.headers, tooMany as never))).toEqual({
      status: 400,
      code: -32600,
    });
  });
});

describe('malformed params', () => {
  type Answer = {
    jsonrpc: '2.0';
    id: unknown;
    result?: unknown;
    error?: { code: number; message: string; data?: { errors: { location: string; message: string }[] } };
  };
  const request = (id: number | string, method: string, params?: unknown) => ({
    jsonrpc: '2.0',
    id,
    method,
    ...(params !== undefined && { params }),
  });
  const answered = async (body: unknown) => {
    const response = await post(h.tenant.headers, body as object);
    expect(response.status, JSON.stringify(body)).toBe(200);
    return (await response.json()) as Answer;
  };

  it('answers -32602 naming what is wrong, never -32603, for every shape of every method served', async () => {
    const initialize = {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 't', version: '1' },
    };
    // Each request, and where its error is: the location and the wording of each refused part.
    const cases: [string, unknown, [string, string][]][] = [
      ['tools/call', 'earshot_alert_list', [['params', 'expected object, got string']]],
      ['tools/call', ['earshot_alert_list'], [['params', 'expected object, got array']]],
      ['tools/call', null, [['params', 'expected object, got null']]],
      ['tools/call', undefined, [['params', 'missing (expected object)']]],
      ['tools/call', {}, [['params.name', 'missing (expected string)']]],
      ['tools/call', { arguments: {} }, [['params.name', 'missing (expected string)']]],
      ['tools/call', { name: 5 }, [['params.name', 'expected string, got number']]],
      ['tools/call', { name: null, arguments: {} }, [['params.name', 'expected string, got null']]],
      [
        'tools/call',
        { name: 'earshot_alert_list', arguments: 'x' },
        [['params.arguments', 'expected object, got string']],
      ],
      [
        'tools/call',
        { name: 'earshot_alert_list', arguments: [] },
        [['params.arguments', 'expected object, got array']],
      ],
      [
        'tools/call',
        { name: 'earshot_alert_list', arguments: null },
        [['params.arguments', 'expected object, got null']],
      ],
      [
        'tools/call',
        { name: 'earshot_alert_list', _meta: 5 },
        [['params._meta', 'expected object, got number']],
      ],
      [
        'tools/call',
        { name: 'earshot_alert_list', _meta: { progressToken: {} } },
        [['params._meta.progressToken', 'expected string or number, got object']],
      ],
      [
        'tools/call',
        { name: 'earshot_alert_list', task: 5 },
        [['params.task', 'expected object, got number']],
      ],
      [
        'tools/call',
        { name: 7, arguments: 'x' },
        [
          ['params.name', 'expected string, got number'],
          ['params.arguments', 'expected object, got string'],
        ],
      ],
      ['tools/list', 'x', [['params', 'expected object, got string']]],
      ['tools/list', [], [['params', 'expected object, got array']]],
      ['tools/list', { cursor: 5 }, [['params.cursor', 'expected string, got number']]],
      ['tools/list', { cursor: null }, [['params.cursor', 'expected string, got null']]],
      ['tools/list', { cursor: 'abc' }, [['params.cursor', 'is not a cursor this server issued']]],
      ['tools/list', { cursor: '' }, [['params.cursor', 'is not a cursor this server issued']]],
      ['ping', 5, [['params', 'expected object, got number']]],
      ['ping', [], [['params', 'expected object, got array']]],
      ['ping', { _meta: 'x' }, [['params._meta', 'expected object, got string']]],
      ['initialize', 'x', [['params', 'expected object, got string']]],
      [
        'initialize',
        {},
        [
          ['params.protocolVersion', 'missing (expected string)'],
          ['params.capabilities', 'missing (expected object)'],
          ['params.clientInfo', 'missing (expected object)'],
        ],
      ],
      [
        'initialize',
        { ...initialize, clientInfo: { name: 5, version: '1' } },
        [['params.clientInfo.name', 'expected string, got number']],
      ],
    ];
    for (const [n, [method, params, parts]] of cases.entries()) {
      const body = request(n, method, params);
      const answer = await answered(body);
      expect(answer, JSON.stringify(body)).toMatchObject({
        jsonrpc: '2.0',
        id: n,
        error: {
          code: -32602,
          data: { errors: parts.map(([location, message]) => ({ location, message })) },
        },
      });
      expect(answer.error?.message).toMatch(new RegExp(`^Invalid params for ${method}: params`));
      for (const [location] of parts) expect(answer.error?.message).toContain(`${location}: `);
    }
    // The same methods with well-formed params still answer as before.
    expect(await answered(request('p', 'ping', { a: 1 }))).toEqual({ jsonrpc: '2.0', id: 'p', result: {} });
    expect((await answered(request('l', 'tools/list', {}))).result).toMatchObject({
      tools: expect.any(Array),
    });
    expect((await answered(request('i', 'initialize', initialize))).result).toMatchObject({
      protocolVersion: '2025-06-18',
    });
  });

  it('answers every request method of MCP with bad params: -32602 where served, -32601 where not', async () => {
    const served = ['initialize', 'ping', 'tools/list', 'tools/call'];
    const methods = ClientRequestSchema.options.map((schema) => schema.shape.method.value);
    expect(methods).toEqual(expect.arrayContaining(served));
    for (const params of ['x', { _meta: 5 }, { _meta: { progressToken: 1.5 } }])
      for (const method of methods) {
        const answer = await answered(request(method, method, params));
        expect(answer.error?.code, `${method} ${JSON.stringify(params)}`).toBe(
          served.includes(method) ? -32602 : -32601,
        );
      }
  });

  it('runs a tools/call that asks for a task as a plain call: the server declares no task support', async () => {
    const asTask = await answered(
      request(1, 'tools/call', { name: 'earshot_alert_list', arguments: {}, task: { ttl: 60_000 } }),
    );
    const plain = await answered(request(1, 'tools/call', { name: 'earshot_alert_list', arguments: {} }));
    expect(asTask).toEqual(plain);
    expect(asTask.result).toMatchObject({ structuredContent: { data: [expect.anything()] } });
  });

  it('keeps an unknown tool a tool result with isError, as the SDK McpServer answers it', async () => {
    const answer = await answered(request(1, 'tools/call', { name: 'earshot_nope', arguments: {} }));
    expect(answer.result).toMatchObject({
      isError: true,
      structuredContent: { error_code: 'invalid_parameter', errors: [{ location: 'name' }] },
    });
  });

  it('answers a batch message by message: bad params -32602 with their own ids, the rest as usual', async () => {
    const response = await post(h.tenant.headers, [
      request('a', 'tools/call', { name: 'earshot_alert_list', arguments: {} }),
      request('b', 'tools/call', 'earshot_alert_list'),
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      request('c', 'ping'),
      request('d', 'tools/list', { cursor: 5 }),
      request('e', 'ping', []),
      request('f', 'tools/call', { name: 'earshot_alert_list', arguments: [] }),
      request('g', 'no/such', 'x'),
      request('h', 'tools/list'),
    ] as never);
    expect(response.status).toBe(200);
    const answers = (await response.json()) as Answer[];
    expect(answers.map((answer) => [answer.id, answer.error?.code ?? 'result'])).toEqual([
      ['a', 'result'],
      ['b', -32602],
      ['c', 'result'],
      ['d', -32602],
      ['e', -32602],
      ['f', -32602],
      ['g', -32601],
      ['h', 'result'],
    ]);
    expect(answers[0]?.result).toMatchObject({ structuredContent: { data: [expect.anything()] } });
    expect(answers[1]?.error?.message).toBe(
      'Invalid params for tools/call: params: expected object, got string',
    );
  });
});

describe('/llms.txt', () => {
  it('indexes the docs and the API from /openapi.json, and /llms-full.txt carries the pages', async () => {
    const index = await (await fetch(`${h.url}/llms.txt`)).text();
    expect(index).toMatch(/^# earshot\n\n> /);
    expect(index).toContain(`- [Agent access: MCP, OAuth 2.1, llms.txt](${h.url}/docs/agents.md): `);
    expect(index).toContain('- `GET /v1/podcasts/{id}`');
    const full = await (await fetch(`${h.url}/llms-full.txt`)).text();
    expect(full).toContain('## Tools');
    const page = await fetch(`${h.url}/docs/agents.md`);
    expect(page.headers.get('content-type')).toContain('text/markdown');
    expect((await fetch(`${h.url}/docs/nope.md`)).status).toBe(404);
  });
});
