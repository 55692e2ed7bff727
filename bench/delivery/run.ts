/**
 * Delivery benchmark.
 *
 *   npm run bench:delivery            (or: node --import tsx bench/delivery/run.ts)
 *
 * 1. Throughput: BENCH_DELIVERIES (default 6000) realtime webhook deliveries from AlertMatched to
 *    a local HTTPS receiver (its own process), by BENCH_DELIVERERS (default 2) processes of
 *    `earshot serve --roles deliverer` on one PostgreSQL schema. Deliveries/s is measured from the
 *    first POST received to the last. Target ≥ 500/s. BENCH_TIMELINE=1 also prints POSTs per 500 ms.
 * 2. Latency: the whole service in this process; episodes ingested through POST /v1/ingest/events
 *    at a steady BENCH_RATE (default 20) per second for BENCH_SECONDS (default 15); latency from the
 *    ingest request to the receiver's 200 of the episode's webhook. Target p99 ≤ 1 s. Also the
 *    service's CPU time per episode (this process), which a loaded machine distorts least.
 *    BENCH_LATENCY_ONLY=1 runs this part alone.
 *
 * Needs the PostgreSQL of the tests (TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { checkWebhookUrl, parseAllowCidrs } from '../../src/webhooks/address-rule.ts';
import { createWebhookConnection } from '../../src/webhooks/connections.ts';
import { deliveryFixture } from '../../test/delivery/support.ts';
import { startEarshot } from '../../test/e2e/harness.ts';
import { entityEvent, episodeEvent } from '../../test/fixtures/events.ts';
import { TEST_DATABASE_URL } from '../../test/support/db.ts';
import { testTls } from '../../test/support/tls.ts';
import { percentile } from '../support/percentile.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 6000);
const DELIVERERS = Number(process.env.BENCH_DELIVERERS ?? 2);
const RATE = Number(process.env.BENCH_RATE ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const TARGET_PER_SECOND = 500;
const TARGET_P99_MS = 1000;

interface Received {
  id: string;
  source?: string;
  at: number;
}

async function startReceiver(tlsDir: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/delivery/receiver.ts')], {
    cwd: ROOT,
    env: { ...process.env, TLS_DIR: tlsDir },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const received: Received[] = [];
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve) => {
    lines.on('line', (line) => {
      const parsed = JSON.parse(line) as Received & { port?: number };
      if (parsed.port !== undefined) resolve(parsed.port);
      else received.push(parsed);
    });
  });
  return {
    url: `https://127.0.0.1:${port}/hook`,
    received,
    stop: () => stopChild(child),
  };
}

async function stopChild(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(25_000).then(() => child.kill('SIGKILL'))]);
}

async function until(check: () => boolean, ms: number, what: string) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

async function throughput(tlsDir: string) {
  const receiver = await startReceiver(tlsDir);
  const f = await deliveryFixture();
  const children: ChildProcess[] = [];
  try {
    const allow = parseAllowCidrs(['127.0.0.0/8']);
    const connection = await createWebhookConnection(
      { db: f.db, box: f.box, now: () => new Date(), checkUrl: (url) => checkWebhookUrl(url, { allow }) },
      { projectId: f.tenant.project.id, url: receiver.url },
    );
    const alert = await f.createAlert({
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: connection.id }],
    });
    process.stdout.write(`appending ${DELIVERIES} matches… `);
    for (let i = 0; i < DELIVERIES; i += 50) {
      await Promise.all(Array.from({ length: Math.min(50, DELIVERIES - i) }, () => f.match(alert.id)));
    }
    process.stdout.write('done\n');
    const { rows } = await f.db.query<{ schema: string }>('select current_schema() as schema');
    const url = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${rows[0]!.schema},public`)}`;
    for (let i = 0; i < DELIVERERS; i++) {
      children.push(
        spawn(process.execPath, [join(ROOT, 'src/cli/earshot.js'), 'serve', '--roles', 'deliverer'], {
          cwd: ROOT,
          env: {
            PATH: process.env.PATH,
            // Every role listens (health, metrics): each process on a port of its own.
            PORT: '0',
            DATABASE_URL: url,
            EARSHOT_SECRET_KEY: f.runtime.secretKey.toString('base64'),
            EARSHOT_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
            NODE_EXTRA_CA_CERTS: join(tlsDir, 'ca.pem'),
            DATA_DIR: f.runtime.config.dataDir,
            LOG_LEVEL: 'warn',
          },
          stdio: ['ignore', 'ignore', 'inherit'],
        }),
      );
    }
    await until(() => receiver.received.length >= DELIVERIES, 300_000, `${DELIVERIES} deliveries`);
    const times = receiver.received.map((r) => r.at).sort((a, b) => a - b);
    const seconds = (times.at(-1)! - times[0]!) / 1000;
    const perSecond = (times.length - 1) / seconds;
    const distinct = new Set(receiver.received.map((r) => r.id)).size;
    if (process.env.BENCH_TIMELINE) {
      const buckets: number[] = [];
      for (const t of times) {
        const b = Math.floor((t - times[0]!) / 500);
        buckets[b] = (buckets[b] ?? 0) + 1;
      }
      console.log(`per 500 ms: ${Array.from(buckets, (n) => n ?? 0).join(' ')}`);
    }
    return { deliveries: times.length, distinct, deliverers: DELIVERERS, seconds, perSecond };
  } finally {
    await Promise.all(children.map(stopChild));
    await receiver.stop();
    await f.close();
  }
}

async function latency(tlsDir: string) {
  const receiver = await startReceiver(tlsDir);
  const earshot = await startEarshot({ delivery: { webhook: { ca: testTls().ca } } });
  try {
    await earshot.ingest([entityEvent({ id: 'ent-bench', name: 'Jensen Huang' })]);
    for (;;) {
      if ((await earshot.api('GET', '/v1/entities/ent-bench')).status === 200) break;
      await sleep(20);
    }
    const connection = await earshot.api(
      'POST',
      `/v1/projects/${earshot.tenant.project.id}/webhooks/connections`,
      {
        url: receiver.url,
      },
    );
    const alert = await earshot.api('POST', `/v1/projects/${earshot.tenant.project.id}/alerts`, {
      title: 'Bench',
      entities: [{ entity_type: 'PERSON', entity_id: 'ent-bench' }],
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: (connection.json() as { id: string }).id }],
    });
    if (alert.status !== 200) throw new Error(`alert: ${alert.bytes}`);
    await sleep(1000); // the matcher picks the alert up

    const sentAt = new Map<string, number>();
    const total = RATE * SECONDS;
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    const inflight: Promise<unknown>[] = [];
    for (let i = 0; i < total; i++) {
      const due = started + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const episode = episodeEvent({ lines: ['Welcome.', `Today: Jensen Huang on episode ${i}.`, 'Bye.'] });
      sentAt.set(episode.episode.id, Date.now());
      inflight.push(earshot.ingest([episode]));
    }
    await Promise.all(inflight);
    await until(() => receiver.received.length >= total, 60_000, `${total} webhooks`);
    const cpu = process.cpuUsage(cpuBefore);
    const latencies = receiver.received
      .filter((r) => r.source && sentAt.has(r.source))
      .map((r) => r.at - sentAt.get(r.source!)!)
      .sort((a, b) => a - b);
    return {
      episodes: total,
      rate: RATE,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies.at(-1)!,
      // The whole service runs in this process: its CPU per episode is the figure load hides least.
      cpuMsPerEpisode: (cpu.user + cpu.system) / 1000 / total,
    };
  } finally {
    await earshot.stop();
    await receiver.stop();
  }
}

const tls = testTls();
// BENCH_LATENCY_ONLY=1 skips the throughput part.
const rate = process.env.BENCH_LATENCY_ONLY ? undefined : await throughput(tls.dir);
if (rate)
  console.log(
    `throughput: ${rate.deliveries} webhook deliveries (${rate.distinct} distinct) by ${rate.deliverers} deliverer processes in ${rate.seconds.toFixed(2)} s = ${rate.perSecond.toFixed(0)}/s (target ≥ ${TARGET_PER_SECOND}/s) ${rate.perSecond >= TARGET_PER_SECOND ? 'OK' : 'BELOW TARGET'}`,
  );
const late = await latency(tls.dir);
console.log(
  `latency: ${late.episodes} episodes at ${late.rate}/s, ingest → receiver 200: p50 ${late.p50} ms, p99 ${late.p99} ms, max ${late.max} ms (target p99 ≤ ${TARGET_P99_MS} ms) ${late.p99 <= TARGET_P99_MS ? 'OK' : 'ABOVE TARGET'}; service CPU ${late.cpuMsPerEpisode.toFixed(1)} ms an episode`,
);
console.log(JSON.stringify({ throughput: rate, latency: late }));
process.exit(0);
