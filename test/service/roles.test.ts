import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../src/platform/keys.ts';
import { entityEvent, episodeEvent } from '../fixtures/events.ts';
import { EARSHOT_BIN, schemaUrl } from '../support/cli.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { type HttpsReceiver, startHttpsReceiver } from '../support/https-receiver.ts';
import { createTenant } from '../support/platform.ts';

interface Proc {
  child: ChildProcess;
  url: string;
  roles: string;
}

const SECRET = randomBytes(32).toString('base64');
let nextPort = 19_000 + Math.floor(Math.random() * 2000);

async function startProcess(
  schema: string,
  roles: string,
  receiver: HttpsReceiver,
  dataDir: string,
): Promise<Proc> {
  const port = nextPort++;
  const child = spawn(process.execPath, [EARSHOT_BIN, 'serve', '--roles', roles], {
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: schemaUrl(schema),
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      EARSHOT_SECRET_KEY: SECRET,
      EARSHOT_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
      EARSHOT_RETRY_SCHEDULE: '1s,1s,1s',
      NODE_EXTRA_CA_CERTS: join(receiver.tls.dir, 'ca.pem'),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    if (process.env.TEST_LOG_LEVEL) process.stderr.write(`[${roles}:${port}] ${chunk}`);
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null)
      throw new Error(`earshot serve --roles ${roles} exited with ${child.exitCode}`);
    const ready = await fetch(`${url}/readyz`).catch(() => undefined);
    if (ready?.ok) return { child, url, roles };
    await sleep(100);
  }
  throw new Error(`earshot serve --roles ${roles} never became ready`);
}

/** SIGTERM, and the exit code (or 'timeout' when it did not exit within the bound). */
function terminate(proc: Proc, boundMs = 30_000): Promise<number | string | null> {
  if (proc.child.exitCode !== null) return Promise.resolve(proc.child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      proc.child.kill('SIGKILL');
      resolve('timeout');
    }, boundMs);
    proc.child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    proc.child.kill('SIGTERM');
  });
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/**
 * The same story told to a deployment of the given process layout: an entity, a webhook
 * connection, an alert on the entity, then twelve episodes (eight mention the entity, one is
 * sent twice). Returns what a user can observe, in a form that does not depend on ids.
 */
async function runScenario(layout: string[]) {
  const testDb: TestDb = await createTestDb();
  const receiver = await startHttpsReceiver();
  const dataDir = mkdtempSync(join(tmpdir(), 'earshot-roles-'));
  const procs: Proc[] = [];
  try {
    const tenant = await createTenant(testDb.db);
    const ingestKey = (await createKey(testDb.db, { kind: 'ingest' })).key;
    for (const roles of layout) procs.push(await startProcess(testDb.schema, roles, receiver, dataDir));
    const apis = procs.filter((p) => p.roles.includes('api'));
    const api = (i: number) => apis[i % apis.length]!.url;
    const call = async (i: number, method: string, path: string, body?: unknown, key = tenant.key) => {
      const response = await fetch(`${api(i)}${path}`, {
        method,
        headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return {
        status: response.status,
        body: (await response.json().catch(() => null)) as Record<string, unknown>,
      };
    };

    const ingest = (i: number, events: unknown[]) =>
      call(i, 'POST', '/v1/ingest/events', { events }, ingestKey);
    expect(
      (await ingest(0, [entityEvent({ id: 'ent-acme', name: 'Acme Rockets', entity_type: 'COMPANY' })]))
        .status,
    ).toBe(202);
    await until('the entity read model', async () =>
      (await call(1, 'GET', '/v1/entities/ent-acme')).status === 200 ? true : undefined,
    );
    const connection = await call(0, 'POST', `/v1/projects/${tenant.project.id}/webhooks/connections`, {
      url: receiver.url('/hook'),
    });
    expect(connection.status).toBe(200);
    const alert = await call(1, 'POST', `/v1/projects/${tenant.project.id}/alerts`, {
      title: 'Acme watch',
      entities: [{ entity_type: 'COMPANY', entity_id: 'ent-acme' }],
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: connection.body.id }],
    });
    expect(alert.status).toBe(200);
    const alertId = alert.body.id as string;

    const publishedAt = new Date(Date.now() - 3_600_000).toISOString();
    const episodes = Array.from({ length: 12 }, (_, i) =>
      episodeEvent({
        id: `ep-${i}`,
        publishedAt,
        lines: [
          'Welcome back.',
          i < 8 ? `Today: why Acme Rockets matters (${i}).` : 'Today: the weather.',
          'Bye.',
        ],
      }),
    );
    // Half through each api process, and one episode twice (a redelivery with a new event id).
    await Promise.all([ingest(0, episodes.slice(0, 6)), ingest(1, episodes.slice(6))]);
    await ingest(0, [{ ...episodes[0], event_id: randomUUID() }]);

    const matches = await until('eight matches', async () => {
      const page = await call(0, 'GET', `/v1/alerts/${alertId}/matches?limit=100`);
      const data = page.body?.data as
        | { source_id: string; mention_count: number; is_backfilled: boolean }[]
        | undefined;
      return data?.length === 8 ? data : undefined;
    });
    const deliveries = await until('eight settled deliveries', async () => {
      const page = await call(1, 'GET', `/v1/alerts/${alertId}/deliveries?limit=100`);
      const data = page.body?.data as { status: string; channel: string }[] | undefined;
      return data?.length === 8 && data.every((d) => d.status === 'SENT') ? data : undefined;
    });
    await sleep(1_000); // anything doubled would arrive by now
    const webhookIds = receiver.requests.map((r) => String(r.headers['webhook-id']));
    // Every process serves /metrics; the deliverers count what they delivered.
    const scraped = await Promise.all(procs.map(async (p) => (await fetch(`${p.url}/metrics`)).text()));
    const delivered = scraped
      .map(
        (text) =>
          /^earshot_deliveries_total\{channel="webhook",outcome="delivered"\} (\d+)$/m.exec(text)?.[1],
      )
      .reduce((sum, value) => sum + Number(value ?? 0), 0);

    const exits = await Promise.all(procs.map((p) => terminate(p)));
    return {
      matches: matches.map((m) => `${m.source_id}:${m.mention_count}:${m.is_backfilled}`).sort(),
      deliveries: deliveries.map((d) => `${d.channel}:${d.status}`).sort(),
      webhooks: { received: webhookIds.length, distinct: new Set(webhookIds).size },
      delivered,
      exits,
    };
  } finally {
    await Promise.all(procs.map((p) => terminate(p, 5_000)));
    await receiver.close();
    await testDb.drop();
  }
}

describe('separable roles', () => {
  let single: Awaited<ReturnType<typeof runScenario>>;
  let scaled: Awaited<ReturnType<typeof runScenario>>;

  beforeAll(async () => {
    single = await runScenario(['api,matcher,projector,deliverer']);
    scaled = await runScenario([
      'api',
      'api',
      'projector',
      'projector',
      'matcher',
      'matcher',
      'deliverer',
      'deliverer',
    ]);
  }, 400_000);
  afterAll(() => {});

  it('gives one match per alert and episode and one webhook per match in a single process', () => {
    expect(single.matches).toHaveLength(8);
    expect(single.matches.every((m) => m.endsWith(':1:false'))).toBe(true);
    expect(single.webhooks).toEqual({ received: 8, distinct: 8 });
    expect(single.delivered).toBe(8);
  });

  it('gives the same results with two processes of each role as with one process', () => {
    expect(scaled.matches).toEqual(single.matches);
    expect(scaled.deliveries).toEqual(single.deliveries);
    expect(scaled.webhooks).toEqual(single.webhooks);
    expect(scaled.delivered).toBe(single.delivered);
  });

  it('drains and exits 0 on SIGTERM, every process of every role', () => {
    expect(single.exits).toEqual([0]);
    expect(scaled.exits).toEqual(Array(8).fill(0));
  });
});
