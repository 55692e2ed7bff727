// bench/alerts-api: alert create and GET throughput against the running service (a real
// `earshot serve` process), next to a bare fastify route reading one row with pg, same run.
// Creations are measured twice: in a new organization, and in one already holding BENCH_HELD_ALERTS
// (2,000) active alerts, whose quota stream a creation reads (docs/alerts.md).
// Target: GET of one alert ≥ 40% of the bare route's requests/s, p99 < 20 ms at that rate.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { alertQuotaStream } from '../../src/alerts/quota.ts';
import { migrate } from '../../src/db/migrate.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { createKey } from '../../src/platform/keys.ts';
import {
  createOrganization,
  createProject,
  setAlertPacks,
  verifyEmail,
} from '../../src/platform/organizations.ts';
import { paced } from '../support/paced.ts';
import { percentile } from '../support/percentile.ts';
import { freePort, ROOT, spawnService, waitForSemanticModel, waitReady } from '../support/service.ts';

const BASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
/** Active alerts an organization already holds in the second creation run. */
const HELD = Number(process.env.BENCH_HELD_ALERTS ?? 2000);
const schema = `bench_alerts_${randomBytes(4).toString('hex')}`;
const schemaUrl = `${BASE_URL}${BASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema},public`)}`;

function start(args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
    child.stdout!.once('data', () => resolve({ child, url: '' }));
  });
}

function cannon(options: autocannon.Options) {
  return new Promise<autocannon.Result>((resolve, reject) =>
    autocannon({ connections: CONNECTIONS, duration: DURATION, ...options }, (error, result) =>
      error ? reject(error) : resolve(result),
    ),
  );
}

const admin = openPostgres({ connectionString: BASE_URL, max: 1 });
await admin.query(`create schema ${schema}`);
const db = openPostgres({ connectionString: BASE_URL, schema, max: 4 });
const children: ChildProcess[] = [];
try {
  await migrate(db);
  const store = createPostgresEventStore(db);
  const org = await createOrganization(db, { name: 'Bench', plan: 'ENTERPRISE' });
  await setAlertPacks(db, org.id, 1_000_000);
  const project = await createProject(db, { organizationId: org.id, name: 'Bench' });
  const { key } = await createKey(db, { kind: 'project', projectId: project.id });
  await ingestEvents(store, [
    {
      type: 'entity.upserted',
      event_id: 'bench-entity',
      occurred_at: new Date().toISOString(),
      entity: { id: 'ent-bench', slug: 'bench-co', name: 'Bench Co', entity_type: 'COMPANY' },
    },
  ]);
  // A second organization already holding HELD active alerts: their slots on its quota stream.
  const busyOrg = await createOrganization(db, { name: 'Bench busy', plan: 'ENTERPRISE' });
  await setAlertPacks(db, busyOrg.id, 1_000_000);
  const busyProject = await createProject(db, { organizationId: busyOrg.id, name: 'Bench busy' });
  const { key: busyKey } = await createKey(db, { kind: 'project', projectId: busyProject.id });
  await verifyEmail(db, busyOrg.id, 'bench@example.com');
  const takenAt = new Date().toISOString();
  await store.append(
    alertQuotaStream(busyOrg.id),
    Array.from({ length: HELD }, (_, i) => ({
      type: 'AlertSlotTaken',
      data: { organizationId: busyOrg.id, alertId: `held-${i}`, takenAt },
    })),
  );
  await store.close();

  const barePort = await freePort();
  const { child: service, url: serviceUrl } = spawnService({
    databaseUrl: schemaUrl,
    port: await freePort(),
    roles: 'api,projector',
  });
  children.push(service);
  await waitReady(`${serviceUrl}/readyz`);
  const bare = await start(['--import', 'tsx', 'bench/alerts-api/bare-server.ts'], {
    DATABASE_URL: schemaUrl,
    PORT: String(barePort),
  });
  children.push(bare.child);

  // The entity must be projected (by the service's projector) before an alert can name it.
  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  const createBody = JSON.stringify({
    title: 'Bench alert',
    entities: [{ entity_type: 'COMPANY', entity_id: 'ent-bench' }],
    notifications: [{ type: 'EMAIL', email: 'bench@example.com' }],
  });
  await verifyEmail(db, org.id, 'bench@example.com');
  let first: Response | undefined;
  for (let i = 0; i < 100; i++) {
    first = await fetch(`${serviceUrl}/v1/projects/${project.id}/alerts`, {
      method: 'POST',
      headers,
      body: createBody,
    });
    if (first.ok) break;
    await sleep(100);
  }
  if (!first?.ok) throw new Error(`create failed: ${first?.status} ${await first?.text()}`);
  const alert = (await first.json()) as { id: string };

  await waitForSemanticModel(serviceUrl, { 'x-api-key': key });
  const creations = (projectId: string, apiKey: string) =>
    cannon({
      url: `${serviceUrl}/v1/projects/${projectId}/alerts`,
      method: 'POST',
      headers: { ...headers, 'x-api-key': apiKey },
      body: createBody,
      duration: Math.max(3, Math.round(DURATION / 2)),
    });
  const create = await creations(project.id, key);
  const createHeld = await creations(busyProject.id, busyKey);
  const get = await cannon({ url: `${serviceUrl}/v1/alerts/${alert.id}`, headers: { 'x-api-key': key } });
  const baseline = await cannon({ url: `http://127.0.0.1:${barePort}/alerts/${alert.id}` });
  // Latency is judged at the target rate (40% of the bare route's), evenly paced, not at saturation.
  const targetRate = Math.floor(baseline.requests.average * 0.4);
  const pool = new Pool(serviceUrl, { connections: CONNECTIONS, pipelining: 1 });
  const getOne = { path: `/v1/alerts/${alert.id}`, headers: { 'x-api-key': key } };
  await paced(pool, getOne, { rate: targetRate, seconds: 2 }); // this client's code compiled first
  const atRate = await paced(pool, getOne, { rate: targetRate, seconds: DURATION });
  await pool.close();
  const times = atRate.times.sort((a, b) => a - b);
  const p99 = percentile(times, 99);

  const row = (name: string, result: autocannon.Result) =>
    `${name.padEnd(34)} ${result.requests.average.toFixed(0).padStart(8)} req/s   p50 ${String(result.latency.p50).padStart(4)} ms   p99 ${String(result.latency.p99).padStart(4)} ms   non-2xx ${result.non2xx}  errors ${result.errors}`;
  const ratio = get.requests.average / baseline.requests.average;
  console.log(
    `\nbench/alerts-api  (${CONNECTIONS} connections, ${DURATION}s per GET run, PostgreSQL ${BASE_URL.replace(/\/\/.*@/, '//')})`,
  );
  console.log(row('POST /v1/projects/{id}/alerts', create));
  console.log(row(`  same, ${HELD} alerts active in the org`, createHeld));
  console.log(row('GET /v1/alerts/{id}', get));
  console.log(row('bare fastify + pg, one row', baseline));
  console.log(
    `${`GET /v1/alerts/{id} at ${targetRate} req/s`.padEnd(34)} ${times.length} answers   p50 ${percentile(times, 50).toFixed(1)} ms   p99 ${p99.toFixed(1)} ms   failed ${atRate.failures}`,
  );
  console.log(
    `GET / bare = ${(ratio * 100).toFixed(1)}%  (target ≥ 40%: ${ratio >= 0.4 ? 'met' : 'NOT met'});  GET p99 at ${targetRate} req/s: ${p99.toFixed(1)} ms (target < 20 ms: ${p99 < 20 && atRate.failures === 0 ? 'met' : 'NOT met'})`,
  );
} finally {
  for (const child of children) child.kill('SIGTERM');
  await sleep(500);
  await db.close();
  await admin.query(`drop schema ${schema} cascade`);
  await admin.close();
}
