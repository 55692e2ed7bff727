import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedEntity } from '../alerts/support.ts';
import { type FullApp, fullApp } from '../support/app.ts';
import { Huge, hostileValue, type Schema, schemaArbitrary, toJsonText } from '../support/schema-arbitrary.ts';

/**
 * Every route of the API, called with bodies, path parameters and query strings generated from
 * its own JSON Schema (from /openapi.json), valid ones mixed with hostile ones. Fixed seed, fixed
 * budget: FUZZ_RUNS requests per route (default 30); FUZZ_SEED explores other cases.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_123);
const RUNS = Number(process.env.FUZZ_RUNS ?? 30);

interface Parameter {
  in: 'path' | 'query' | 'header';
  name: string;
  required?: boolean;
  schema: Schema;
}
interface Route {
  method: string;
  path: string;
  parameters: Parameter[];
  body: Schema | undefined;
  auth: 'public' | 'ingest' | 'project';
}

interface GeneratedRequest {
  path: Record<string, unknown>;
  query: [string, unknown][];
  body: unknown;
  encoding: 'json' | 'text' | 'form' | 'multipart' | 'bad-utf8' | 'truncated' | 'none';
  credential: 'right' | 'none' | 'garbage' | 'other-kind';
}

const HINTS: Record<string, readonly unknown[]> = {
  entity_type: ['PERSON', 'COMPANY', 'KNOWLEDGE_GRAPH_ENTITY', 'person'],
  entity_id: ['ent-jensen', 'ent-unknown'],
  type: ['EMAIL', 'CHAT', 'WEBHOOK', 'entity.upserted', 'episode.transcribed'],
  email: ['ops@example.com', 'new@example.com'],
  kind: ['ENTITY_MENTION', 'PODCAST_SPEAKER'],
  delivery_cadence: ['REALTIME', 'DAILY', 'WEEKLY'],
  relevance: ['RELEVANT', 'ANY', 'on_target'],
  languages: ['en', 'de', 'xx'],
  source_popularity: ['TOP', 'POPULAR', 'ANY'],
  speaker_roles: ['GUEST', 'HOST', 'PANELIST'],
  url: ['https://127.0.0.1/hook', 'http://example.com/', 'https://[::1]/x', 'not a url'],
  view: ['summary', 'detailed'],
  q: ['jensen', 'a', ' '],
};

/** The producer event schemas (schemas/events/), their local $refs inlined: what /v1/ingest/events takes as items. */
function eventSchema(name: string): Schema {
  const schema = JSON.parse(
    readFileSync(new URL(`../../schemas/events/${name}.json`, import.meta.url), 'utf8'),
  );
  const inline = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(inline);
    if (node === null || typeof node !== 'object') return node;
    const ref = (node as { $ref?: string }).$ref;
    if (ref?.startsWith('#/definitions/'))
      return inline(schema.definitions[ref.slice('#/definitions/'.length)]);
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inline(value)]));
  };
  return inline(schema) as Schema;
}

const INGEST_BODY: Schema = {
  type: 'object',
  required: ['events'],
  properties: {
    events: {
      type: 'array',
      minItems: 1,
      maxItems: 3,
      items: { oneOf: [eventSchema('entity.upserted'), eventSchema('episode.transcribed')] },
    },
  },
};

/**
 * Query and path values travel as text; lone surrogates cannot be percent-encoded, so they become
 * invalid UTF-8. Each is cut to 2,000 characters: Node's HTTP parser refuses request lines over
 * 16 KiB before the app sees them, while inject() would hand the app any length.
 */
function encodeLoose(text: string) {
  const value = text.slice(0, 2_000);
  return value.isWellFormed()
    ? encodeURIComponent(value)
    : `${encodeURIComponent(value.toWellFormed())}%ED%A0%80`;
}
const asText = (value: unknown) =>
  typeof value === 'string'
    ? value
    : value instanceof Huge
      ? value.toString()
      : (JSON.stringify(value) ?? '');

function routesOf(document: { paths: Record<string, Record<string, Record<string, unknown>>> }): Route[] {
  const routes: Route[] = [];
  for (const [path, operations] of Object.entries(document.paths))
    for (const [method, operation] of Object.entries(operations)) {
      const content = (operation.requestBody as { content?: Record<string, { schema: Schema }> } | undefined)
        ?.content;
      const security = operation.security as unknown[] | undefined;
      routes.push({
        method: method.toUpperCase(),
        path,
        parameters: (operation.parameters ?? []) as Parameter[],
        body: path === '/v1/ingest/events' ? INGEST_BODY : content?.['application/json']?.schema,
        auth: path.startsWith('/v1/ingest/')
          ? 'ingest'
          : security?.length === 0 || !path.startsWith('/v1/')
            ? 'public'
            : 'project',
      });
    }
  return routes;
}

/**
 * Polls /healthz from another process over the listening socket until stopped: the server answers
 * its liveness probe all along. How long each answer took is noted, not bounded: on a machine shared
 * by several test runs it is mostly how long the server's and the poller's processes waited for a CPU.
 */
function pollHealth(url: string) {
  const poller: ChildProcess = spawn(
    process.execPath,
    [
      '-e',
      `const http = require('node:http');
         let stop = false, slowest = 0, count = 0, failures = 0;
         process.stdin.on('data', () => {}).on('end', () => { stop = true; });
         (async () => {
           while (!stop) {
             const started = performance.now();
             await new Promise((resolve) => http.get(process.argv[1], (r) => {
               if (r.statusCode !== 200) failures++;
               r.resume().on('end', resolve);
             }).on('error', () => { failures++; resolve(); }));
             slowest = Math.max(slowest, performance.now() - started);
             count++;
             await new Promise((resolve) => setTimeout(resolve, 20));
           }
           process.stdout.write(JSON.stringify({ slowest, count, failures }));
         })();`,
      url,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let out = '';
  poller.stdout!.on('data', (chunk) => {
    out += chunk;
  });
  const closed = new Promise<void>((resolve) => poller.on('close', () => resolve()));
  return {
    kill: () => poller.exitCode === null && poller.kill(),
    async stop() {
      poller.stdin!.end();
      await closed;
      return JSON.parse(out) as { slowest: number; count: number; failures: number };
    },
  };
}

/**
 * The milliseconds of CPU this thread has used: on Linux its own, from its schedstat (the kernel's
 * count, in nanoseconds); elsewhere the whole process's, which also counts V8's and libuv's threads.
 */
function cpuClock(): () => number {
  const schedstat = '/proc/thread-self/schedstat';
  try {
    readFileSync(schedstat, 'utf8');
    return () => Number(readFileSync(schedstat, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1000;
    };
  }
}

/**
 * Watches this process's event loop, the server's (the app listens in the test's own process), with
 * a 5 ms ticker until stopped. A tick that comes late means the loop did not get round to it:
 * either its thread was running something else all that time (a handler blocking the loop, which
 * holds up /healthz and every other request), or the thread was not running at all: waiting for a
 * CPU the machine gave to other processes (or the hypervisor took), or for V8's helper threads, as
 * starved. Only the first is the server's doing, and the thread's CPU time counts it whatever the
 * load: `stall` is the longest delay of a tick that the thread spent running (the delay, at most the
 * thread's CPU time meanwhile); `rawStall` the longest delay as measured. (A handler that put the
 * thread to sleep in a synchronous call would go unseen; the server makes none on a request's path,
 * only while starting.)
 */
function watchEventLoop() {
  const TICK = 5;
  const cpu = cpuClock();
  let stall = 0;
  let rawStall = 0;
  let ticks = 0;
  let last = performance.now();
  let lastCpu = cpu();
  const ticker = setInterval(() => {
    const now = performance.now();
    const used = cpu();
    const late = now - last - TICK;
    rawStall = Math.max(rawStall, late);
    stall = Math.max(stall, Math.min(late, used - lastCpu));
    ticks++;
    last = now;
    lastCpu = used;
  }, TICK);
  ticker.unref();
  return {
    stop() {
      clearInterval(ticker);
      return { stall, rawStall, ticks };
    },
  };
}

describe('every route, fuzzed from its schema', () => {
  let f: FullApp;
  let baseUrl: string;
  let poller: ReturnType<typeof pollHealth> | undefined;
  let resolveRef: (ref: string) => Schema | undefined;
  let snapshotSql: string;
  const known: Record<string, string[]> = {};

  beforeAll(async () => {
    f = await fullApp({ env: { EARSHOT_RATE_LIMIT_PER_KEY: '0', EARSHOT_RATE_LIMIT_PER_IP: '0' } });
    baseUrl = await f.app.listen({ port: 0, host: '127.0.0.1' });
    await seedEntity(f.db);
    const alert = await f.app.inject({
      method: 'POST',
      url: `/v1/projects/${f.tenant.project.id}/alerts`,
      headers: f.tenant.headers,
      payload: {
        title: 'Fuzzed',
        entities: [{ entity_type: 'PERSON', entity_id: 'ent-jensen' }],
        notifications: [{ type: 'EMAIL', email: 'ops@example.com' }],
      },
    });
    expect(alert.statusCode).toBe(200);
    known.projectId = [f.tenant.project.id];
    known.id = [alert.json().id, 'nothing-here'];
    known.previewId = ['nothing-here'];
    const { rows } = await f.db.query<{ table_name: string }>(
      `select table_name from information_schema.tables
        where table_schema = current_schema() and table_type = 'BASE TABLE' order by 1`,
    );
    snapshotSql = `select ${rows.map((r) => `(select count(*) from "${r.table_name}")::int as "${r.table_name}"`).join(', ')}`;
  });
  afterAll(async () => {
    poller?.kill();
    await f?.close();
  });

  const snapshot = async () => (await f.db.query(snapshotSql)).rows[0] as Record<string, number>;

  function requestArbitrary(route: Route): fc.Arbitrary<GeneratedRequest> {
    const options = {
      resolve: (ref: string) => resolveRef(ref),
      hints: HINTS,
      hostility: 1,
    };
    const pathParams = route.parameters.filter((p) => p.in === 'path');
    const queryParams = route.parameters.filter((p) => p.in === 'query');
    return fc.record({
      path: fc.record(
        Object.fromEntries(
          pathParams.map((p) => [
            p.name,
            known[p.name]
              ? fc.oneof(
                  { arbitrary: fc.constantFrom(...known[p.name]!), weight: 3 },
                  { arbitrary: schemaArbitrary(p.schema, options), weight: 1 },
                )
              : schemaArbitrary(p.schema, options),
          ]),
        ),
      ),
      query: fc
        .tuple(
          ...queryParams.map((p) =>
            fc.option(schemaArbitrary(p.schema, options, p.name).map((v): [string, unknown] => [p.name, v])),
          ),
          fc.option(fc.tuple(fc.string({ maxLength: 10 }), hostileValue)),
        )
        .map((pairs) => pairs.filter((pair): pair is [string, unknown] => pair !== null)),
      body: route.body
        ? fc.oneof(
            schemaArbitrary(route.body, options),
            schemaArbitrary(route.body, { ...options, hostility: 0 }),
          )
        : fc.option(hostileValue, { freq: 3 }),
      encoding: fc.oneof(
        { arbitrary: fc.constant('json' as const), weight: 12 },
        fc.constantFrom('text', 'form', 'multipart', 'bad-utf8', 'truncated', 'none'),
      ),
      credential: fc.oneof(
        { arbitrary: fc.constant('right' as const), weight: 12 },
        fc.constantFrom('none', 'garbage', 'other-kind'),
      ),
    });
  }

  function toInject(route: Route, generated: GeneratedRequest) {
    const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) =>
      encodeLoose(asText(generated.path[name])),
    );
    const query = generated.query.map(
      ([name, value]) => `${encodeLoose(name)}=${encodeLoose(asText(value))}`,
    );
    const url = query.length ? `${path}?${query.join('&')}` : path;
    const headers: Record<string, string> = {};
    const key =
      generated.credential === 'garbage'
        ? 'ek_garbage'
        : generated.credential === 'none'
          ? undefined
          : (route.auth === 'ingest') === (generated.credential === 'right')
            ? f.ingestKey
            : f.tenant.key;
    if (key) headers['x-api-key'] = key;
    let payload: string | Buffer | undefined;
    const hasBody = generated.body !== undefined && generated.body !== null && route.method !== 'GET';
    if (hasBody) {
      const json = toJsonText(generated.body);
      switch (generated.encoding) {
        case 'json':
        case 'none':
          headers['content-type'] = 'application/json';
          payload = json;
          break;
        case 'text':
          headers['content-type'] = 'text/plain';
          payload = json;
          break;
        case 'form':
          headers['content-type'] = 'application/x-www-form-urlencoded';
          payload = `token=${encodeLoose(json.slice(0, 4000))}&List-Unsubscribe=One-Click`;
          break;
        case 'multipart':
          headers['content-type'] = 'multipart/form-data; boundary=xyz';
          payload = `--xyz\r\nContent-Disposition: form-data; name="token"\r\n\r\n${json.slice(0, 4000)}\r\n--xyz--\r\n`;
          break;
        case 'bad-utf8':
          headers['content-type'] = 'application/json';
          payload = Buffer.concat([
            Buffer.from(json.slice(0, -1)),
            Buffer.from([0xc3, 0x28]),
            Buffer.from(json.slice(-1)),
          ]);
          break;
        case 'truncated':
          headers['content-type'] = 'application/json';
          payload = json.slice(0, Math.floor(json.length / 2));
          break;
      }
    }
    return { method: route.method, url, headers, ...(payload === undefined ? {} : { payload }) };
  }

  it('never answers 5xx, answers every 4xx as a problem, stores nothing on a 4xx, and /healthz stays fast', async () => {
    await f.app.ready();
    const document = f.app.swagger() as unknown as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
      components?: { schemas?: Record<string, Schema> };
    };
    resolveRef = (ref) => document.components?.schemas?.[ref.split('/').pop()!.replace(/#$/, '')];
    const routes = routesOf(document);
    expect(routes.length).toBeGreaterThan(20);
    const problems: string[] = [];
    const statuses: Record<string, number> = {};
    // Generated before the clock starts: generation runs on this event loop too.
    const plan = routes.map((route, index) =>
      fc.sample(requestArbitrary(route), { seed: SEED + index, numRuns: RUNS }),
    );
    poller = pollHealth(`${baseUrl}/healthz`);
    const loop = watchEventLoop();
    for (const [index, route] of routes.entries()) {
      for (const generated of plan[index]!) {
        const request = toInject(route, generated);
        const before = await snapshot();
        const response = await f.app.inject(request);
        const label = `${route.method} ${route.path} → ${response.statusCode} (${request.url.slice(0, 120)})`;
        statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1;
        if (response.statusCode >= 500) {
          problems.push(`${label}: ${response.body.slice(0, 300)}`);
          continue;
        }
        if (response.statusCode < 400) continue;
        const body = response.json();
        if (!/^application\/problem\+json/.test(String(response.headers['content-type'])))
          problems.push(`${label}: content-type ${response.headers['content-type']}`);
        if (typeof body.error_code !== 'string' || !(Array.isArray(body.errors) || body.errors === null))
          problems.push(`${label}: not a problem: ${response.body.slice(0, 200)}`);
        const after = await snapshot();
        if (JSON.stringify(after) !== JSON.stringify(before))
          problems.push(`${label}: stored something: ${JSON.stringify(before)} → ${JSON.stringify(after)}`);
      }
    }
    const { stall, rawStall, ticks } = loop.stop();
    const health = await poller.stop();
    expect(problems).toEqual([]);
    expect(health.failures).toBe(0);
    expect(health.count).toBeGreaterThan(10);
    expect(ticks).toBeGreaterThan(100);
    // No request's handling blocks the loop for long: 100 ms of its thread's own running, whatever
    // the machine's load (which the slowest /healthz answer and the latest tick include).
    expect(
      stall,
      `the event loop's thread ran ${Math.round(stall)} ms at once (its ticker came ` +
        `${Math.round(rawStall)} ms late at worst; /healthz answered in ${Math.round(health.slowest)} ms at worst)`,
    ).toBeLessThan(100);
    // The fuzz reached past authentication and validation, not only their refusals.
    expect(Object.keys(statuses)).toEqual(expect.arrayContaining(['200', '202', '400', '404', '422']));
  }, 120_000);
});
