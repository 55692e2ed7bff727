// bench/mcp: MCP tools/call next to the REST route it performs, same service, same run. A real
// `earshot serve` process; three representative tools: a catalog read by id, a search, and a
// project-scoped list. For each pair: a warm-up of both, both saturated (their rates and the
// service's CPU time per request), then both at one even rate, a quarter of REST's saturated rate
// (bench/support/paced.ts), each side alone in one-second turns REST, MCP, MCP, REST, … with each
// side's latencies pooled. Last, one request at a time on one kept-alive connection, REST and MCP
// alternating: the latency the MCP layer adds when nothing queues.
// Target: tools/call p99 within 1.3× of the REST route's p99 at the even rate (docs/agents.md).
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { migrate } from '../../src/db/migrate.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { createKey } from '../../src/platform/keys.ts';
import { createOrganization, createProject, verifyEmail } from '../../src/platform/organizations.ts';
import { paced } from '../support/paced.ts';
import { percentile } from '../support/percentile.ts';
import { freePort, spawnService, waitFor, waitForSemanticModel } from '../support/service.ts';
import { benchCatalog } from './seed.ts';

const BASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP = 2;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const schema = `bench_mcp_${randomBytes(4).toString('hex')}`;
const schemaUrl = `${BASE_URL}${BASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema},public`)}`;

/** One autocannon run at full speed. */
function cannon(options: autocannon.Options, duration = DURATION) {
  return new Promise<autocannon.Result>((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, duration, ...options }, (error, result) =>
      error ? reject(error) : resolve(result),
    );
  });
}

const oneAtATime = new Agent({ keepAlive: true, maxSockets: 1 });

/** One request on the kept-alive connection; resolves with its latency in ms once the body is read. */
function sendTo(base: string, method: string, path: string, headers: Record<string, string>, body?: string) {
  const target = new URL(path, base);
  return new Promise<number>((resolve, reject) => {
    const started = performance.now();
    const outgoing = request(target, { method, headers, agent: oneAtATime }, (answer) => {
      if ((answer.statusCode ?? 500) >= 300) reject(new Error(`${method} ${path}: ${answer.statusCode}`));
      answer.resume();
      answer.on('end', () => resolve(performance.now() - started));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** REST and MCP back to back, one at a time, for DURATION seconds (after 50 unmeasured pairs). */
async function alternating(rest: () => Promise<number>, mcp: () => Promise<number>) {
  for (let i = 0; i < 50; i++) {
    await rest();
    await mcp();
  }
  const times = { rest: [] as number[], mcp: [] as number[] };
  const until = performance.now() + DURATION * 1000;
  while (performance.now() < until) {
    times.rest.push(await rest());
    times.mcp.push(await mcp());
  }
  const restSorted = times.rest.sort((a, b) => a - b);
  const mcpSorted = times.mcp.sort((a, b) => a - b);
  return {
    count: restSorted.length,
    rest50: percentile(restSorted, 50),
    rest99: percentile(restSorted, 99),
    mcp50: percentile(mcpSorted, 50),
    mcp99: percentile(mcpSorted, 99),
  };
}

const load = () =>
  `load average ${loadavg()
    .map((value) => value.toFixed(2))
    .join(', ')}`;

const admin = openPostgres({ connectionString: BASE_URL, max: 1 });
await admin.query(`create schema ${schema}`);
const db = openPostgres({ connectionString: BASE_URL, schema, max: 4 });
let service: ChildProcess | undefined;
try {
  await migrate(db);
  const store = createPostgresEventStore(db);
  const org = await createOrganization(db, { name: 'Bench', plan: 'ENTERPRISE' });
  const project = await createProject(db, { organizationId: org.id, name: 'Bench' });
  const { key } = await createKey(db, { kind: 'project', projectId: project.id });
  await verifyEmail(db, org.id, 'bench@example.com');
  await ingestEvents(store, benchCatalog(new Date().toISOString()));
  await store.close();

  const started = spawnService({ databaseUrl: schemaUrl, port: await freePort(), roles: 'api,projector' });
  service = started.child;
  const { url } = started;
  const headers = { 'x-api-key': key };
  await waitFor('readiness', async () => (await fetch(`${url}/readyz`)).ok);
  await waitForSemanticModel(url, headers);
  await waitFor(
    'the podcast projected',
    async () => (await fetch(`${url}/v1/podcasts/pod-bench`, { headers })).ok,
  );
  await waitFor(
    'an alert',
    async () =>
      (
        await fetch(`${url}/v1/projects/${project.id}/alerts`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify({
            title: 'Bench alert',
            entities: [{ entity_type: 'COMPANY', entity_id: 'ent-bench' }],
            notifications: [{ type: 'EMAIL', email: 'bench@example.com' }],
          }),
        })
      ).ok,
  );

  const pairs = [
    { tool: 'earshot_podcast_get', args: { id: 'the-bench-show' }, rest: '/v1/podcasts/the-bench-show' },
    { tool: 'earshot_entity_resolve', args: { q: 'Bench' }, rest: '/v1/entities/search?q=Bench' },
    { tool: 'earshot_alert_list', args: {}, rest: `/v1/projects/${project.id}/alerts` },
  ];
  const mcpHeaders = {
    ...headers,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const body = (tool: string, args: object) =>
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: args } });
  for (const pair of pairs) {
    const check = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: mcpHeaders,
      body: body(pair.tool, pair.args),
    });
    const answer = (await check.json()) as { result?: { isError?: boolean } };
    if (!check.ok || !answer.result || answer.result.isError)
      throw new Error(`${pair.tool}: ${JSON.stringify(answer)}`);
  }

  /** The service's CPU seconds so far, from its own /metrics. */
  const cpuSeconds = async () => {
    const text = await (await fetch(`${url}/metrics`)).text();
    return Number(/^process_cpu_seconds_total (\S+)$/m.exec(text)?.[1]);
  };
  // The projector role polls in the same process: its CPU while idle is taken off each run's. Measured
  // right before each pair, after its warm-up, as the least of three one-second windows: just after
  // start-up the process is still busy with work of its own (compiling, catching up), and a window
  // that caught some of it made the subtraction larger than the run's own CPU.
  const idleCpuPerSecond = async () => {
    const windows: number[] = [];
    for (let i = 0; i < 3; i++) {
      const before = await cpuSeconds();
      const started = performance.now();
      await sleep(1000);
      windows.push(((await cpuSeconds()) - before) / ((performance.now() - started) / 1000));
    }
    return Math.min(...windows);
  };
  const saturated = async (options: autocannon.Options, idlePerSecond: number) => {
    const before = await cpuSeconds();
    const started = performance.now();
    const result = await cannon(options);
    const busy = (await cpuSeconds()) - before - (idlePerSecond * (performance.now() - started)) / 1000;
    return { result, cpu: busy / result.requests.total };
  };
  const send = (method: string, path: string, headers: Record<string, string>, body?: string) =>
    sendTo(url, method, path, headers, body);
  const ms = (value: number) => `${value.toFixed(1).padStart(6)} ms`;
  const failures = (result: autocannon.Result) => result.non2xx + result.errors;

  console.log(
    `\nbench/mcp  (${CONNECTIONS} connections, ${DURATION} s per run, one api+projector process; ${load()})`,
  );
  const verdicts: string[] = [];
  for (const pair of pairs) {
    const restOptions = { url: `${url}${pair.rest}`, headers };
    const mcpOptions = {
      url: `${url}/mcp`,
      method: 'POST' as const,
      headers: mcpHeaders,
      body: body(pair.tool, pair.args),
    };
    await cannon(restOptions, WARMUP);
    await cannon(mcpOptions, WARMUP);
    const idle = await idleCpuPerSecond();
    const rest = await saturated(restOptions, idle);
    const mcp = await saturated(mcpOptions, idle);
    let failed = failures(rest.result) + failures(mcp.result);
    console.log(`\n${pair.tool}  vs  GET ${pair.rest.slice(0, 60)}`);
    console.log(
      `  saturated   REST ${rest.result.requests.average.toFixed(0).padStart(6)} req/s (${(rest.cpu * 1e6).toFixed(0)} µs CPU each)   MCP ${mcp.result.requests.average.toFixed(0).padStart(6)} req/s (${(mcp.cpu * 1e6).toFixed(0)} µs CPU each)   idle ${(idle * 1000).toFixed(0)} ms CPU/s`,
    );
    // The target's load: a quarter of REST's saturated rate, the same for both, evenly paced
    // (bench/support/paced.ts), each side alone in one-second turns, REST MCP MCP REST … so that a
    // drift of the machine's load or a pause of the process falls on both alike.
    const rate = Math.max(1, Math.floor(rest.result.requests.average / 4));
    const sides = {
      REST: { path: pair.rest, headers },
      MCP: { path: '/mcp', method: 'POST' as const, headers: mcpHeaders, body: body(pair.tool, pair.args) },
    };
    const pool = new Pool(url, { connections: CONNECTIONS, pipelining: 1 });
    // Unmeasured: this client's own code is compiled at this rate before anything counts.
    for (const side of ['REST', 'MCP'] as const)
      failed += (await paced(pool, sides[side], { rate, seconds: WARMUP })).failures;
    const pooled = { REST: [] as number[], MCP: [] as number[] };
    for (let turn = 0; turn < 2 * DURATION; turn++) {
      const side = turn % 4 === 0 || turn % 4 === 3 ? 'REST' : 'MCP';
      const run = await paced(pool, sides[side], { rate, seconds: 1 });
      pooled[side].push(...run.times);
      failed += run.failures;
    }
    await pool.close();
    const restTimes = pooled.REST.sort((a, b) => a - b);
    const mcpTimes = pooled.MCP.sort((a, b) => a - b);
    const target = { restP99: percentile(restTimes, 99), mcpP99: percentile(mcpTimes, 99) };
    console.log(
      `  at ${rate} req/s   REST p50 ${ms(percentile(restTimes, 50))}  p99 ${ms(target.restP99)}  (${restTimes.length} answers)   MCP p50 ${ms(percentile(mcpTimes, 50))}  p99 ${ms(target.mcpP99)}  (${mcpTimes.length} answers)`,
    );
    const alone = await alternating(
      () => send('GET', pair.rest, headers),
      () => send('POST', '/mcp', mcpHeaders, body(pair.tool, pair.args)),
    );
    console.log(
      `  one at a time   REST p50 ${ms(alone.rest50)}  p99 ${ms(alone.rest99)}   MCP p50 ${ms(alone.mcp50)}  p99 ${ms(alone.mcp99)}  (${alone.count} of each)`,
    );
    if (failed) throw new Error(`${pair.tool}: ${failed} failed requests`);
    const ratio = target.mcpP99 / target.restP99;
    verdicts.push(
      `${pair.tool}: p99 ${target.mcpP99.toFixed(1)} ms vs REST ${target.restP99.toFixed(1)} ms at ${rate} req/s = ${ratio.toFixed(2)}× (target ≤ 1.3×: ${ratio <= 1.3 ? 'met' : 'NOT met'}); one at a time p50 +${(alone.mcp50 - alone.rest50).toFixed(2)} ms, p99 ${(alone.mcp99 / alone.rest99).toFixed(2)}×; saturated ${(mcp.result.requests.average / rest.result.requests.average).toFixed(2)}× the REST rate, ${(mcp.cpu / rest.cpu).toFixed(2)}× its CPU per request`,
    );
  }
  console.log(`\n${verdicts.join('\n')}\n(${load()})`);
} finally {
  service?.kill('SIGTERM');
  await sleep(500);
  await db.close();
  await admin.query(`drop schema ${schema} cascade`);
  await admin.close();
}
