import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import pino from 'pino';
import { buildCapabilities } from '../../src/composition.ts';
import { loadConfig } from '../../src/config.ts';
import { type DeliveryOptions, deliveryCapability } from '../../src/delivery/capability.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { createKey } from '../../src/platform/keys.ts';
import type { Capability, Runtime } from '../../src/runtime.ts';
import { deriveKey } from '../../src/secret-key.ts';
import { runProjection } from '../../src/subscriptions/projection-runner.ts';
import { createTestDb } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';

/** The service's capabilities, with the delivery pipeline's test options. */
function capabilitiesOf(runtime: Runtime, delivery: DeliveryOptions): Capability[] {
  return [
    ...buildCapabilities(runtime).filter((c) => c.name !== 'delivery'),
    deliveryCapability(runtime, delivery),
  ];
}

export type Earshot = Awaited<ReturnType<typeof startEarshot>>;

/**
 * The whole service in this process, on a fresh PostgreSQL schema: every projection, every worker
 * of every role, the HTTP API on 127.0.0.1.
 */
export async function startEarshot(
  options: { env?: Record<string, string>; delivery?: DeliveryOptions } = {},
) {
  const testDb = await createTestDb({ max: 30 });
  const db = testDb.db;
  const store = createPostgresEventStore(db, { pollIntervalMs: 20 });
  const secretKey = randomBytes(32);
  const config = loadConfig({
    PUBLIC_BASE_URL: 'https://earshot.test',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'earshot-e2e-')),
    EARSHOT_SECRET_KEY: secretKey.toString('base64'),
    EARSHOT_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
    ...options.env,
  });
  const runtime: Runtime = {
    config,
    db,
    store,
    secretKey,
    log: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    now: () => new Date(),
  };
  const capabilities = capabilitiesOf(runtime, options.delivery ?? {});
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  const running: Promise<unknown>[] = [];
  const projections = capabilities.flatMap((c) => c.projections ?? []);
  for (const projection of projections) {
    running.push(
      runProjection(db, store, projection, {
        signal: controller.signal,
        lockRetryMs: 200,
        onError: (error) =>
          runtime.log.error({ err: error, projection: projection.name }, 'projection failed'),
      }),
    );
  }
  for (const worker of capabilities.flatMap((c) => c.workers ?? []))
    running.push(worker.run(controller.signal));
  const app = await buildHttpApp({
    db,
    cursorKey: deriveKey(secretKey, 'cursor'),
    routes: capabilities.flatMap((c) => c.routes ?? []),
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const tenant = await createTenant(db, 'TEAM');
  const ingest = await createKey(db, { kind: 'ingest' });

  return {
    url,
    db,
    store,
    runtime,
    tenant,
    ingestKey: ingest.key,
    schema: testDb.schema,
    async api(
      method: string,
      path: string,
      body?: unknown,
      headers: Record<string, string> = tenant.headers,
    ) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const bytes = Buffer.from(await response.arrayBuffer());
      return {
        status: response.status,
        headers: response.headers,
        bytes,
        json: () => JSON.parse(bytes.toString('utf8')),
      };
    },
    async ingest(events: unknown[]) {
      const response = await this.api('POST', '/v1/ingest/events', { events }, { 'x-api-key': ingest.key });
      if (response.status !== 202) throw new Error(`ingest answered ${response.status}: ${response.bytes}`);
      return response.json();
    },
    async stop() {
      controller.abort();
      await app.close();
      await Promise.all(running);
      await store.close();
      await testDb.drop();
    },
  };
}

/** Polls until `check` returns a value other than undefined, or throws after `ms`. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  ms = 15_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await sleep(25);
  }
}
