import type { ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { type AgentsOptions, agentsCapability } from '../../src/agents/capability.ts';
import { catalogProjections } from '../../src/catalog/capability.ts';
import { buildCapabilities } from '../../src/composition.ts';
import { loadConfig } from '../../src/config.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { listenEarly } from '../../src/http/early-server.ts';
import type { IngestEvent } from '../../src/ingestion/events.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import type { Runtime } from '../../src/runtime.ts';
import { createTestDb } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';
import { catchUp } from '../support/projections.ts';
import { testTls } from '../support/tls.ts';

export const ROOT_KEY = Buffer.alloc(32, 7);

/**
 * The whole app (every capability) listening on a real local port, its PUBLIC_BASE_URL that
 * address; `advance(ms)` moves its clock.
 */
export async function agentsHarness(
  env: Record<string, string> = {},
  logger?: FastifyBaseLogger,
  agents?: AgentsOptions,
) {
  const testDb = await createTestDb();
  const { db } = testDb;
  const store = createPostgresEventStore(db, { pollIntervalMs: 50 });
  const early = await listenEarly(0, '127.0.0.1');
  let offset = 0;
  const runtime: Runtime = {
    config: loadConfig({ PUBLIC_BASE_URL: early.url, DATA_DIR: '/tmp/earshot-agents-test', ...env }),
    db,
    store,
    secretKey: ROOT_KEY,
    log: pino({ level: 'silent' }),
    now: () => new Date(Date.now() + offset),
  };
  const app = await buildHttpApp({
    db,
    cursorKey: Buffer.alloc(32, 8),
    routes: buildCapabilities(runtime)
      .map((c) => (c.name === 'agents' && agents ? agentsCapability(runtime, agents) : c))
      .flatMap((c) => c.routes ?? []),
    server: early,
    ...(logger ? { logger } : {}),
  });
  await app.ready();
  const tenant = await createTenant(db, 'TEAM');
  return {
    url: early.url,
    mcpUrl: `${early.url}/mcp`,
    app,
    db,
    store,
    tenant,
    advance(ms: number) {
      offset += ms;
    },
    async ingest(events: IngestEvent[]) {
      await ingestEvents(store, events);
      for (const projection of [entitiesProjection, ...catalogProjections])
        await catchUp(db, store, projection);
    },
    async close() {
      await app.close();
      await store.close();
      await testDb.drop();
    },
  };
}

export type AgentsHarness = Awaited<ReturnType<typeof agentsHarness>>;

/** A JSON-RPC POST to an MCP endpoint, as an MCP client sends it. */
export const mcpPost = (mcpUrl: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(mcpUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });

/**
 * A local https server (certificate from the throwaway test CA) that serves client metadata
 * documents: each path answers as its handler says, and every request is counted by path.
 */
export async function startDocumentServer() {
  const tls = testTls();
  const handlers = new Map<string, (res: ServerResponse) => void>();
  const hits = new Map<string, number>();
  const server = createHttpsServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const path = req.url ?? '';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const handler = handlers.get(path);
    if (handler) handler(res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = (path: string) => `https://127.0.0.1:${port}${path}`;
  return {
    tls,
    url,
    hits: (path: string) => hits.get(path) ?? 0,
    handle(path: string, handler: (res: ServerResponse) => void) {
      handlers.set(path, handler);
      return url(path);
    },
    /** Serves `document` as JSON at `path` (its client_id defaults to the URL); returns the URL. */
    serve(path: string, document: Record<string, unknown>, headers: Record<string, string> = {}) {
      return this.handle(path, (res) => {
        res
          .writeHead(200, { 'content-type': 'application/json', ...headers })
          .end(JSON.stringify({ client_id: url(path), ...document }));
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type DocumentServer = Awaited<ReturnType<typeof startDocumentServer>>;
