// bench/catalog: a generated catalog (10,000 podcasts, 200,000 episodes, 20,000 transcribed, one
// with 2,000 lines; 50 charts captured daily for 30 days, for the references' best ranks) ingested
// into the read models, then the catalog routes of a real
// `earshot serve --roles api` process measured next to a bare fastify + pg one-row route, same run,
// each route twice: with the catalog's response cache (as deployed) and without it, each right
// after a measurement of the bare route.
// Targets: every route ≥ 25% of the bare route's req/s at 20 connections; p99 < 50 ms for the
// lists and < 100 ms for the 2,000-line transcript; ingest ≥ 500 episodes/s into the read models.
// The search and the filtered list cycle through 200 queries and 60 filter combinations.
// BENCH_PODCASTS, BENCH_EPISODES_PER_PODCAST, BENCH_TRANSCRIBED_EVERY, BENCH_SECONDS and
// BENCH_CONNECTIONS scale it down or up; BENCH_ROUTES (a comma list of words, e.g. `q=,filtered`)
// measures only the routes whose name contains one of them.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { chartCapturesProjection } from '../../projections/chart_captures/projection.ts';
import { podcastLinksProjection } from '../../projections/podcast-links/projection.ts';
import { catalogProjections } from '../../src/catalog/capability.ts';
import { migrate } from '../../src/db/migrate.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import type { IngestEvent } from '../../src/ingestion/events.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { createKey } from '../../src/platform/keys.ts';
import { createOrganization, createProject } from '../../src/platform/organizations.ts';
import { catchUpProjection } from '../../src/subscriptions/projection-runner.ts';
import { freePort, ROOT, spawnService, waitForSemanticModel, waitReady } from '../support/service.ts';
import { episodeEvent, podcastEvent, podcastTitle, rankingEvents } from './synthetic.ts';

const BASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const PODCASTS = Number(process.env.BENCH_PODCASTS ?? 10_000);
const PER_PODCAST = Number(process.env.BENCH_EPISODES_PER_PODCAST ?? 20);
const TRANSCRIBED_EVERY = Number(process.env.BENCH_TRANSCRIBED_EVERY ?? 10);
const LONG_TRANSCRIPT = 2000;
// BENCH_SCHEMA keeps the generated catalog in that schema (and reuses it when it is there).
const kept = process.env.BENCH_SCHEMA;
const schema = kept ?? `bench_catalog_${randomBytes(4).toString('hex')}`;
const schemaUrl = `${BASE_URL}${BASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema},public`)}`;

function cannon(options: autocannon.Options) {
  return new Promise<autocannon.Result>((resolve, reject) =>
    autocannon({ connections: CONNECTIONS, duration: DURATION, ...options }, (error, result) =>
      error ? reject(error) : resolve(result),
    ),
  );
}

/**
 * One episode in TRANSCRIBED_EVERY is transcribed: every other episode of one show in
 * TRANSCRIBED_EVERY / 2, as transcription is bought per show. Those shows have enough analyzed
 * episodes for a guest frequency and signals, so the filtered list has shows to find.
 */
const TRANSCRIBED_SHOW_EVERY = Math.max(1, Math.round(TRANSCRIBED_EVERY / 2));
const transcribed = Math.ceil(PODCASTS / TRANSCRIBED_SHOW_EVERY) * Math.ceil(PER_PODCAST / 2);
function* events(now: Date): Generator<IngestEvent> {
  for (let p = 0; p < PODCASTS; p++) {
    yield podcastEvent(p);
    for (let n = 0; n < PER_PODCAST; n++) {
      const transcribed = p % TRANSCRIBED_SHOW_EVERY === 0 && n % 2 === 0;
      yield episodeEvent(p, n, p === 0 && n === 0 ? LONG_TRANSCRIPT : transcribed ? 40 : 0, now);
    }
  }
}

const admin = openPostgres({ connectionString: BASE_URL, max: 1 });
await admin.query(`create schema if not exists ${schema}`);
const db = openPostgres({ connectionString: BASE_URL, schema, max: 10 });
const children: ChildProcess[] = [];
try {
  await migrate(db);
  const store = createPostgresEventStore(db);
  const org = await createOrganization(db, { name: 'Bench', plan: 'ENTERPRISE' });
  const project = await createProject(db, { organizationId: org.id, name: 'Bench' });
  const { key } = await createKey(db, { kind: 'project', projectId: project.id });

  const now = new Date();
  const episodes = PODCASTS * PER_PODCAST;
  const reused = (await db.query<{ n: number }>('select count(*)::int as n from podcasts')).rows[0]!.n > 0;
  let started = performance.now();
  let batch: IngestEvent[] = [];
  for (const event of reused ? [] : events(now)) {
    batch.push(event);
    if (batch.length === 500) {
      await ingestEvents(store, batch);
      batch = [];
    }
  }
  if (batch.length) await ingestEvents(store, batch);
  const appendSeconds = (performance.now() - started) / 1000;
  started = performance.now();
  // Each read model follows the store on its own, as the projector role runs them.
  await Promise.all(catalogProjections.map((projection) => catchUpProjection(db, store, projection)));
  const projectSeconds = (performance.now() - started) / 1000;
  // Untimed (not catalog read models): the links GET /v1/podcasts/{id} relates shows by, and the
  // chart captures behind every podcast reference's best rank.
  if (!reused) await ingestEvents(store, [...rankingEvents(PODCASTS, now)]);
  await catchUpProjection(db, store, podcastLinksProjection);
  await catchUpProjection(db, store, chartCapturesProjection);
  await store.close();
  // This schema's tables as autovacuum leaves a deployed catalog at rest (it may be off on a test server).
  const { rows: tables } = await db.query<{ name: string }>(
    'select format($2, schemaname, tablename) as name from pg_tables where schemaname = $1',
    [schema, '%I.%I'],
  );
  await db.query(`vacuum analyze ${tables.map((t) => t.name).join(', ')}`);

  const barePort = await freePort();
  // The service as deployed (its response cache on) and with EARSHOT_CATALOG_CACHE_MB=0: every
  // request computed from the read models.
  const serve = async (cacheMb: string) => {
    const service = spawnService({
      databaseUrl: schemaUrl,
      port: await freePort(),
      roles: 'api',
      env: { EARSHOT_CATALOG_CACHE_MB: cacheMb },
    });
    children.push(service.child);
    return service.url;
  };
  const services = { cached: await serve('64'), uncached: await serve('0') };
  const bare = spawn(process.execPath, ['--import', 'tsx', 'bench/catalog/bare-server.ts'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: schemaUrl, PORT: String(barePort) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(bare);
  const headers = { 'x-api-key': key };
  for (const url of Object.values(services)) await waitReady(`${url}/readyz`);
  for (const url of Object.values(services)) await waitForSemanticModel(url, headers);
  await waitReady(`http://127.0.0.1:${barePort}/podcasts/pod-1`);

  const queries = Array.from({ length: 200 }, (_, i) => {
    const words = podcastTitle(i * 37).split(' ');
    // a typo, a dropped word, or extra words, as searchers type them
    const query =
      i % 3 === 0
        ? words.map((w, k) => (k === 1 ? w.slice(0, -1) : w)).join(' ')
        : i % 3 === 1
          ? words.slice(0, 2).join(' ')
          : `${words.join(' ')} podcast episodes`;
    return encodeURIComponent(query);
  });
  // Filter combinations, cycled like the queries: every one finds shows (checked below).
  const filters = Array.from({ length: 60 }, (_, i) => {
    const params = new URLSearchParams({
      language: ['en', 'fr', 'de', 'es'][i % 4] as string,
      min_popularity: String([0.1, 0.3, 0.5][i % 3]),
      guest_frequency: ['occasional,regular,always', 'regular,always', 'occasional,regular'][
        Math.floor(i / 4) % 3
      ] as string,
      publishing_status: 'active',
      topic_id: ['technology', 'science', 'business', 'culture', 'sports'][i % 5] as string,
    });
    return `/v1/podcasts?${params}`;
  });
  const allRoutes: [string, (base: string) => autocannon.Options, number][] = [
    [
      'GET /v1/podcasts?q=',
      (base) => {
        let q = 0;
        return {
          url: base,
          headers,
          requests: [
            {
              method: 'GET',
              setupRequest: (r) => ({ ...r, path: `/v1/podcasts?q=${queries[q++ % queries.length]}` }),
            },
          ],
        };
      },
      50,
    ],
    [
      'GET /v1/podcasts (filtered)',
      (base) => {
        let f = 0;
        return {
          url: base,
          headers,
          requests: [{ method: 'GET', setupRequest: (r) => ({ ...r, path: filters[f++ % filters.length] }) }],
        };
      },
      50,
    ],
    [
      'GET /v1/podcasts/{id} (with related, recommended)',
      (base) => ({ url: `${base}/v1/podcasts/pod-1`, headers }),
      50,
    ],
    [
      'GET /v1/podcasts/episodes/{id}?include=transcript',
      (base) => ({ url: `${base}/v1/podcasts/episodes/ep-0-0?include=transcript`, headers }),
      100,
    ],
    [
      'GET /v1/podcasts/episodes/{id}/transcript srt',
      (base) => ({ url: `${base}/v1/podcasts/episodes/ep-0-0/transcript?format=srt`, headers }),
      100,
    ],
  ];
  const only = process.env.BENCH_ROUTES?.split(',');
  const routes = allRoutes.filter(([name]) => !only || only.some((word) => name.includes(word)));
  if (routes.length === 0) throw new Error(`BENCH_ROUTES=${process.env.BENCH_ROUTES} names no route`);
  // Each filtered list must find shows, or it would measure an empty page.
  let found = Number.POSITIVE_INFINITY;
  for (const path of filters) {
    const page = await fetch(`${services.uncached}${path}`, { headers });
    const shows = ((await page.json()) as { data: unknown[] }).data.length;
    if (shows === 0) throw new Error(`${path} finds no shows`);
    found = Math.min(found, shows);
  }
  // The bare route is measured right before each route, so a share compares two measurements
  // taken at the same load: on a shared host the load moves within a run.
  const bareRoute = () => cannon({ url: `http://127.0.0.1:${barePort}/podcasts/pod-1` });
  const results: [string, autocannon.Result, number, autocannon.Result][] = [];
  for (const [name, options, p99Target] of routes)
    for (const [kind, base] of Object.entries(services)) {
      const bare = await bareRoute();
      results.push([`${name} ${kind}`, await cannon(options(base)), p99Target, bare]);
    }

  const row = (name: string, r: autocannon.Result) =>
    `${name.padEnd(58)} ${r.requests.average.toFixed(0).padStart(7)} req/s   p50 ${String(r.latency.p50).padStart(4)} ms   p99 ${String(r.latency.p99).padStart(4)} ms   non-2xx ${r.non2xx}  errors ${r.errors}`;
  console.log(
    `\nbench/catalog  (${PODCASTS} podcasts, ${episodes} episodes, ${transcribed} transcribed; ${CONNECTIONS} connections, ${DURATION}s a route; filtered lists: ${filters.length}, each with at least ${found} shows on its first page)`,
  );
  console.log(
    reused
      ? `catalog reused from schema ${schema}: ingest not measured`
      : `append ${(episodes / appendSeconds).toFixed(0)} episodes/s; read models ${(episodes / projectSeconds).toFixed(0)} episodes/s (target ≥ 500: ${episodes / projectSeconds >= 500 ? 'met' : 'NOT met'})`,
  );
  for (const [name, result, p99Target, bare] of results) {
    const share = result.requests.average / bare.requests.average;
    console.log(row(name, result));
    console.log(
      `${''.padEnd(58)} ${(share * 100).toFixed(1)}% of bare ${bare.requests.average.toFixed(0)} req/s measured just before (target ≥ 25%: ${share >= 0.25 && result.non2xx === 0 ? 'met' : 'NOT met'}); p99 target < ${p99Target} ms: ${result.latency.p99 < p99Target && result.non2xx === 0 ? 'met' : 'NOT met'}`,
    );
  }
} finally {
  for (const child of children) child.kill('SIGTERM');
  await sleep(500);
  await db.close();
  if (!kept) await admin.query(`drop schema ${schema} cascade`);
  await admin.close();
}
