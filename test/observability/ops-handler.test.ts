import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EarlyServer, listenEarly } from '../../src/http/early-server.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { opsHandler } from '../../src/observability/ops-handler.ts';
import { createTestDb, type TestDb } from '../support/db.ts';

const close = (server: EarlyServer) => new Promise<void>((resolve) => server.server.close(() => resolve()));

describe('the ops endpoints of a process without the api role', () => {
  let testDb: TestDb;
  let unmigrated: TestDb;
  let server: EarlyServer;
  let pending: EarlyServer;
  const metrics = createMetrics({ defaultMetrics: false });

  beforeAll(async () => {
    [testDb, unmigrated] = await Promise.all([createTestDb(), createTestDb({ migrated: false })]);
    server = await listenEarly(0, '127.0.0.1');
    server.attach(opsHandler({ db: testDb.db, metrics }));
    pending = await listenEarly(0, '127.0.0.1');
    pending.attach(opsHandler({ db: unmigrated.db, metrics }));
  });
  afterAll(async () => {
    await Promise.all([close(server), close(pending)]);
    await Promise.all([testDb.drop(), unmigrated.drop()]);
  });

  it('answers /healthz and /readyz like the api does', async () => {
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok' } });
  });

  it('is not ready while migrations are pending', async () => {
    const ready = await fetch(`${pending.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({
      status: 'not_ready',
      checks: { database: 'ok', migrations: 'pending' },
    });
  });

  it("serves the process's metrics", async () => {
    metrics.deliveries.inc({ channel: 'email', outcome: 'delivered' });
    const response = await fetch(`${server.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await response.text()).toContain(
      'earshot_deliveries_total{channel="email",outcome="delivered"} 1',
    );
  });

  it('answers anything else with a problem', async () => {
    const missing = await fetch(`${server.url}/v1/alerts`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe('application/problem+json');
    expect(await missing.json()).toMatchObject({ status: 404, error_code: 'route_not_found' });
    const post = await fetch(`${server.url}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });
});
