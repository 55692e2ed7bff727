import pino from 'pino';
import { buildCapabilities } from '../../src/composition.ts';
import { loadConfig } from '../../src/config.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp, type HttpDeps } from '../../src/http/app.ts';
import { createKey } from '../../src/platform/keys.ts';
import { verifyEmail } from '../../src/platform/organizations.ts';
import type { Runtime } from '../../src/runtime.ts';
import { createTestDb } from './db.ts';
import { createTenant } from './platform.ts';

/**
 * The whole HTTP API as `earshot serve` composes it, on a fresh PostgreSQL schema, with a tenant
 * (project key) and an ingest key. Background workers and projections do not run.
 */
export async function fullApp(options: { env?: NodeJS.ProcessEnv; http?: Partial<HttpDeps> } = {}) {
  const testDb = await createTestDb();
  const { db } = testDb;
  const store = createPostgresEventStore(db, { pollIntervalMs: 50 });
  const config = loadConfig({ EARSHOT_WEBHOOK_ALLOW_CIDRS: '', ...options.env });
  const runtime: Runtime = {
    config,
    db,
    store,
    secretKey: Buffer.alloc(32, 5),
    log: pino({ level: 'silent' }),
    now: () => new Date(),
  };
  const capabilities = buildCapabilities(runtime);
  const app = await buildHttpApp({
    db,
    cursorKey: Buffer.alloc(32, 6),
    routes: capabilities.flatMap((c) => c.routes ?? []),
    rateLimit: config.rateLimit,
    ...options.http,
  });
  const tenant = await createTenant(db, 'TEAM');
  await verifyEmail(db, tenant.organization.id, 'ops@example.com');
  const ingest = await createKey(db, { kind: 'ingest' });
  return {
    app,
    db,
    store,
    tenant,
    ingestKey: ingest.key,
    async close() {
      await app.close();
      await store.close();
      await testDb.drop();
    },
  };
}

export type FullApp = Awaited<ReturnType<typeof fullApp>>;
