import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DeliveryEvent, deliveryStream, foldDelivery } from '../../src/delivery/delivery.ts';
import { type DeliveryFixture, deliveryFixture } from '../delivery/support.ts';
import { TEST_DATABASE_URL } from '../support/db.ts';
import { eventually } from './harness.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BURST = 150;

/** `earshot serve --roles deliverer` as its own process, on the fixture's schema. */
function deliverer(
  f: DeliveryFixture,
  schema: string,
  name: string,
): ChildProcess & { running: Promise<void> } {
  const url = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema},public`)}`;
  const child = spawn(process.execPath, [join(ROOT, 'src/cli/earshot.js'), 'serve', '--roles', 'deliverer'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      // Every role listens (health, metrics): each process on a port of its own.
      PORT: '0',
      DATABASE_URL: url,
      EARSHOT_SECRET_KEY: f.runtime.secretKey.toString('base64'),
      EARSHOT_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
      EARSHOT_RETRY_SCHEDULE: '1s,1s,1s',
      NODE_EXTRA_CA_CERTS: join(f.tls.dir, 'ca.pem'),
      DATA_DIR: f.runtime.config.dataDir,
      PUBLIC_BASE_URL: 'https://earshot.test',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const running = new Promise<void>((resolve) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (log.length < 100_000) log += chunk.toString('utf8');
      if (log.includes('"msg":"earshot is running"')) resolve();
    });
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    if (process.env.TEST_LOG_LEVEL) process.stderr.write(`[${name}] ${chunk}`);
  });
  return Object.assign(child, { running });
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once('exit', () => resolve()));

describe('deliverer processes killed with SIGKILL during a burst', () => {
  let f: DeliveryFixture;
  let schema: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    f = await deliveryFixture();
    const { rows } = await f.db.query<{ schema: string }>('select current_schema() as schema');
    schema = rows[0]!.schema;
  });
  afterAll(async () => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await Promise.all(children.map(exited));
    await f?.close();
  });

  it('ends every delivery terminal, loses none, and a repeat POST carries the same webhook-id', async () => {
    const alert = await f.createAlert({
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: f.webhook.id }],
    });
    f.receiver.respondWith(...Array.from({ length: BURST * 3 }, () => ({ delayMs: 40 })));
    const matches = [];
    for (let i = 0; i < BURST; i++) matches.push(await f.match(alert.id));
    const expected = new Set(matches.map((m) => f.ids.realtime(m.matchId, `webhook:${f.webhook.id}`)));

    const first = deliverer(f, schema, 'a');
    const second = deliverer(f, schema, 'b');
    children.push(first, second);
    await eventually(
      async () => (f.receiver.requests.length >= 20 ? true : undefined),
      60_000,
      'the first deliveries',
    );
    first.kill('SIGKILL');
    await exited(first);
    const killedAt = f.receiver.requests.length;
    expect(killedAt).toBeLessThan(BURST); // killed mid-burst
    const restarted = deliverer(f, schema, 'a2');
    children.push(restarted);

    const states = await eventually(
      async () => {
        const all = await Promise.all(
          [...expected].map(async (id) => {
            const events = await f.store.readStream(deliveryStream(id));
            return foldDelivery(events.map((e) => ({ type: e.type, data: e.data }) as DeliveryEvent));
          }),
        );
        return all.every((s) => s.status === 'sent') ? all : undefined;
      },
      90_000,
      'every delivery SENT',
    );
    expect(states).toHaveLength(BURST);

    const received = f.receiver.requests.map((r) => ({
      id: String(r.headers['webhook-id']),
      at: r.receivedAt.getTime(),
    }));
    expect(new Set(received.map((r) => r.id))).toEqual(expected);
    // A repeat (an attempt cut off by the kill, made again after the lease ran out) has the same
    // webhook-id and never overlaps the first one.
    const byId = new Map<string, number[]>();
    for (const r of received) byId.set(r.id, [...(byId.get(r.id) ?? []), r.at]);
    for (const times of byId.values()) {
      for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThan(1_000);
    }
    const { rows } = await f.db.query<{ n: number }>('select count(*)::int as n from delivery_queue');
    expect(rows[0]!.n).toBe(0);

    // SIGTERM drains a running process; one still starting up would just die.
    await Promise.all([second.running, restarted.running]);
    for (const child of [second, restarted]) child.kill('SIGTERM');
    await Promise.all([exited(second), exited(restarted)]);
    expect([second.exitCode, restarted.exitCode]).toEqual([0, 0]);
  }, 150_000);
});
