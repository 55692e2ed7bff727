// bench/mcp-calls: where a tools/call's CPU goes, layer by layer, without HTTP. The whole app on a
// fresh schema of the real PostgreSQL, every request performed in-process through fastify's routing
// (src/agents/route-call.ts), ten at a time, for the three tools of bench/mcp:
//   route        the REST route as a client calls it (its API key), the figure a tool call is held to
//   inner route  the same route as the tool performs it (the delegation of an already verified caller)
//   tool         callTool: that inner route plus the tool layer (arguments in, result out)
//   /mcp pass    POST /mcp for a tool no connection serves: the /mcp request, its POST rules and
//                tools/call handling, with no route behind it
//   tools/call   the whole tool call as POST /mcp
// What the network adds (a POST body, a larger answer) is bench/mcp's. Each figure is the median of
// BENCH_ROUNDS rounds of BENCH_CALLS calls, the layers interleaved within a round so that a drift of
// the shared machine's load falls on all of them alike. BENCH_LAYERS (names, comma-separated) and
// BENCH_TOOLS narrow a run, e.g. to profile one layer with node --cpu-prof.
import { loadavg } from 'node:os';
import pino from 'pino';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { SCOPES } from '../../src/agents/oauth/tokens.ts';
import { callRoute } from '../../src/agents/route-call.ts';
import { buildTools, callTool } from '../../src/agents/tools.ts';
import { catalogProjections } from '../../src/catalog/capability.ts';
import { buildCapabilities } from '../../src/composition.ts';
import { loadConfig } from '../../src/config.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { verifyEmail } from '../../src/platform/organizations.ts';
import type { Runtime } from '../../src/runtime.ts';
import { builtinProvider } from '../../src/search/semantic/word-vectors.ts';
import { catchUpProjection } from '../../src/subscriptions/projection-runner.ts';
import { projectAlerts } from '../../test/alerts/support.ts';
import { createTestDb } from '../../test/support/db.ts';
import { createTenant } from '../../test/support/platform.ts';
import { benchCatalog } from '../mcp/seed.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const AT_ONCE = 10;
const only = (variable: string | undefined) => (variable ? new Set(variable.split(',')) : undefined);
const LAYERS = only(process.env.BENCH_LAYERS);
const TOOLS = only(process.env.BENCH_TOOLS);

const load = () =>
  `load average ${loadavg()
    .map((value) => value.toFixed(2))
    .join(', ')}`;

const testDb = await createTestDb();
const { db } = testDb;
const store = createPostgresEventStore(db, { pollIntervalMs: 50 });
// As `earshot serve` runs under bench/mcp: a pino logger at level error (BENCH_LOG_LEVEL: another,
// e.g. info as in production), rate limits and the searches in flight per key off.
const log = pino({ level: process.env.BENCH_LOG_LEVEL ?? 'error' }, pino.destination('/dev/null'));
const runtime: Runtime = {
  config: loadConfig({
    PUBLIC_BASE_URL: 'http://localhost:3000',
    DATA_DIR: '/tmp/earshot-bench-mcp-calls',
    EARSHOT_RATE_LIMIT_PER_KEY: '0',
    EARSHOT_RATE_LIMIT_PER_IP: '0',
    EARSHOT_SEARCH_PROJECT_CONCURRENCY: '1000',
  }),
  db,
  store,
  secretKey: Buffer.alloc(32, 7),
  log,
  now: () => new Date(),
};
const app = await buildHttpApp({
  db,
  cursorKey: Buffer.alloc(32, 8),
  routes: buildCapabilities(runtime).flatMap((c) => c.routes ?? []),
  logger: log.child({ component: 'http' }),
  rateLimit: runtime.config.rateLimit,
});
try {
  await app.ready();
  const tenant = await createTenant(db, 'ENTERPRISE');
  await verifyEmail(db, tenant.organization.id, 'bench@example.com');
  await ingestEvents(store, benchCatalog(new Date().toISOString()));
  for (const projection of [entitiesProjection, ...catalogProjections])
    await catchUpProjection(db, store, projection);
  const created = await app.inject({
    method: 'POST',
    url: `/v1/projects/${tenant.project.id}/alerts`,
    headers: tenant.headers,
    payload: {
      title: 'Bench alert',
      entities: [{ entity_type: 'COMPANY', entity_id: 'ent-bench' }],
      notifications: [{ type: 'EMAIL', email: 'bench@example.com' }],
    },
  });
  if (created.statusCode !== 200) throw new Error(`alert: ${created.body}`);
  await projectAlerts(db, store);
  // The API reads the built-in semantic model at start, in the background (seconds of CPU): measured
  // with it, the first layers of the first tool carried that load as if it were theirs.
  await builtinProvider.embed([]);

  const tools = buildTools(app);
  const caller = {
    principal: {
      keyId: tenant.keyId,
      kind: 'project' as const,
      projectId: tenant.project.id,
      organizationId: tenant.organization.id,
    },
    via: 'api_key' as const,
    scopes: SCOPES,
  };
  const mcpHeaders = {
    host: 'localhost',
    ...tenant.headers,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const toolsCall = (name: string, args: object) =>
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
  const ok = (answer: { statusCode: number; body: string }) => {
    if (answer.statusCode !== 200) throw new Error(`${answer.statusCode}: ${answer.body}`);
  };

  const pairs = [
    { tool: 'earshot_podcast_get', args: { id: 'the-bench-show' }, rest: '/v1/podcasts/the-bench-show' },
    { tool: 'earshot_entity_resolve', args: { q: 'Bench' }, rest: '/v1/entities/search?q=Bench' },
    { tool: 'earshot_alert_list', args: {}, rest: `/v1/projects/${tenant.project.id}/alerts` },
  ];
  console.log(
    `\nbench/mcp-calls  (CPU µs per call, in-process, ${AT_ONCE} at a time; median of ${ROUNDS} × ${CALLS}; ${load()})`,
  );
  for (const pair of pairs) {
    if (TOOLS && !TOOLS.has(pair.tool)) continue;
    const tool = tools.find((t) => t.name === pair.tool);
    if (!tool) throw new Error(`${pair.tool} is not served`);
    const layers: Record<string, () => Promise<unknown>> = {
      route: async () =>
        ok(
          await callRoute(app, {
            method: 'GET',
            url: pair.rest,
            headers: { host: 'localhost', ...tenant.headers },
          }),
        ),
      'inner route': async () => {
        const delegation = app.delegate(caller.principal);
        try {
          ok(
            await callRoute(app, {
              method: 'GET',
              url: pair.rest,
              headers: {
                ...delegation.headers,
                host: 'localhost',
                accept: 'application/json',
                'x-request-id': 'bench',
              },
            }),
          );
        } finally {
          delegation.release();
        }
      },
      tool: async () => {
        const result = await callTool(app, tool, pair.args, caller, 'bench');
        if (result.isError) throw new Error(JSON.stringify(result));
      },
      '/mcp pass': async () =>
        ok(
          await callRoute(app, {
            method: 'POST',
            url: '/mcp',
            headers: mcpHeaders,
            body: toolsCall('earshot_none', {}),
          }),
        ),
      'tools/call': async () => {
        const answer = await callRoute(app, {
          method: 'POST',
          url: '/mcp',
          headers: mcpHeaders,
          body: toolsCall(pair.tool, pair.args),
        });
        ok(answer);
        if (answer.body.includes('"isError":true')) throw new Error(answer.body);
      },
    };
    const cpu = async (call: () => Promise<unknown>, calls: number) => {
      const before = process.cpuUsage();
      for (let i = 0; i < calls / AT_ONCE; i++) await Promise.all(Array.from({ length: AT_ONCE }, call));
      const used = process.cpuUsage(before);
      return (used.user + used.system) / calls;
    };
    for (const name in layers) if (LAYERS && !LAYERS.has(name)) delete layers[name];
    const figures: Record<string, number[]> = {};
    for (const name in layers) {
      await cpu(layers[name]!, CALLS / 3);
      figures[name] = [];
    }
    for (let round = 0; round < ROUNDS; round++)
      for (const name in layers) figures[name]!.push(await cpu(layers[name]!, CALLS));
    const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const line = Object.entries(figures)
      .map(([name, values]) => `${name} ${median(values).toFixed(0)}`)
      .join('   ');
    console.log(`${pair.tool.padEnd(24)} ${line}`);
  }
  console.log(`(${load()})`);
} finally {
  await app.close();
  await store.close();
  await testDb.drop();
}
