// bench/x402: what paying per request adds. A real `earshot serve` process with x402 on, paid in
// a token on a local chain (ganache in this process) through a facilitator on loopback that runs
// the reference verify/settle logic. The same catalog read, alternately with an API key (the
// yardstick) and paid with a fresh signature (verify before the handler, settle on chain after
// it), one request at a time. Reports p50/p99 of both and the difference.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { migrate } from '../../src/db/migrate.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { createKey } from '../../src/platform/keys.ts';
import { createOrganization, createProject, verifyEmail } from '../../src/platform/organizations.ts';
import { startFacilitator } from '../../test/support/chain/facilitator.ts';
import { startLocalChain } from '../../test/support/chain/local-chain.ts';
import { payerClient } from '../../test/support/chain/payer.ts';
import { TEST_DATABASE_URL } from '../../test/support/db.ts';
import { percentile } from '../support/percentile.ts';
import { freePort, spawnService, waitFor } from '../support/service.ts';

const BASE_URL = process.env.BENCH_DATABASE_URL ?? TEST_DATABASE_URL;
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);
const schema = `bench_x402_${randomBytes(4).toString('hex')}`;
const schemaUrl = `${BASE_URL}${BASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema},public`)}`;

const summary = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
};
const ms = (value: number) => `${value.toFixed(1).padStart(7)} ms`;

const chain = await startLocalChain({ payers: 1 });
const facilitator = await startFacilitator(chain);
const admin = openPostgres({ connectionString: BASE_URL, max: 1 });
await admin.query(`create schema ${schema}`);
const db = openPostgres({ connectionString: BASE_URL, schema, max: 4 });
let service: ChildProcess | undefined;
try {
  await migrate(db);
  const store = createPostgresEventStore(db);
  const org = await createOrganization(db, { name: 'Bench', plan: 'TEAM' });
  const project = await createProject(db, { organizationId: org.id, name: 'Bench' });
  const { key } = await createKey(db, { kind: 'project', projectId: project.id });
  await verifyEmail(db, org.id, 'bench@example.com');
  await ingestEvents(store, [
    {
      type: 'podcast.upserted',
      event_id: 'bench-podcast',
      occurred_at: new Date().toISOString(),
      podcast: { id: 'pod-bench', title: 'The Bench Show', slug: 'the-bench-show' },
    },
  ]);
  await store.close();
  const payer = payerClient(chain, chain.payers[0]!);
  const price = 10_000n;
  await chain.mint(payer.account.address, price * BigInt(REQUESTS + 10));

  const started = spawnService({
    databaseUrl: schemaUrl,
    port: await freePort(),
    roles: 'api,projector',
    env: chain.env(facilitator.url),
  });
  service = started.child;
  const { url } = started;
  const route = `${url}/v1/podcasts/pod-bench`;
  const keyed = { 'x-api-key': key };
  await waitFor('readiness', async () => (await fetch(`${url}/readyz`)).ok);
  await waitFor('the podcast projected', async () => (await fetch(route, { headers: keyed })).ok);
  const challenge = await fetch(route);
  if (challenge.status !== 402) throw new Error(`keyless call answered ${challenge.status}, not 402`);
  const required = payer.required(challenge, await challenge.json());

  const timed = async (headers: Record<string, string>) => {
    const started = performance.now();
    const response = await fetch(route, { headers });
    const body = await response.text();
    const elapsed = performance.now() - started;
    if (response.status !== 200) throw new Error(`answered ${response.status}: ${body}`);
    return elapsed;
  };
  for (let i = 0; i < 20; i++) await timed(keyed);
  for (let i = 0; i < 5; i++) await timed(await payer.sign(required));

  const before = await chain.balanceOf(payer.account.address);
  const samples = { keyed: [] as number[], paid: [] as number[] };
  // Interleaved, so both paths see the same machine load; signing happens before the clock starts.
  for (let i = 0; i < REQUESTS; i++) {
    samples.keyed.push(await timed(keyed));
    samples.paid.push(await timed(await payer.sign(required)));
  }
  const spent = before - (await chain.balanceOf(payer.account.address));
  if (spent !== price * BigInt(REQUESTS))
    throw new Error(`paid ${spent}, expected ${price * BigInt(REQUESTS)}`);

  const k = summary(samples.keyed);
  const p = summary(samples.paid);
  console.log(`\nbench/x402  (${REQUESTS} requests per path, interleaved, one api+projector process)`);
  console.log(`GET /v1/podcasts/:id with an API key (yardstick)  p50 ${ms(k.p50)}   p99 ${ms(k.p99)}`);
  console.log(`GET /v1/podcasts/:id paid with x402               p50 ${ms(p.p50)}   p99 ${ms(p.p99)}`);
  console.log(
    `added by paying (verify + on-chain settle)         p50 ${ms(p.p50 - k.p50)}   p99 ${ms(p.p99 - k.p99)}`,
  );
  const v = summary(facilitator.durations.verify);
  const st = summary(facilitator.durations.settle);
  console.log(`  of which the facilitator's verify                  p50 ${ms(v.p50)}   p99 ${ms(v.p99)}`);
  console.log(`  of which the facilitator's settle (tx + receipt)   p50 ${ms(st.p50)}   p99 ${ms(st.p99)}`);
  console.log(
    `settled ${REQUESTS} × ${price} atomic units = ${spent}; facilitator calls: verify ${facilitator.calls.verify}, settle ${facilitator.calls.settle}`,
  );
} finally {
  service?.kill('SIGTERM');
  await sleep(500);
  await db.close();
  await admin.query(`drop schema ${schema} cascade`);
  await admin.close();
  await facilitator.close();
  await chain.close();
}
