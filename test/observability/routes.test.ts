import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresEventStore, type PostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { createMetrics, type Metrics } from '../../src/observability/metrics.ts';
import { observabilityRoutes } from '../../src/observability/routes.ts';
import { createTestDb, type TestDb } from '../support/db.ts';

/** A capability's routes, registered after the observability plugin as the composition does. */
async function fixtureRoutes(app: FastifyInstance) {
  app.get('/things/:id', { config: { auth: 'public' } }, async () => ({ ok: true }));
  app.get('/v1/things', async () => ({ ok: true }));
}

/** The value of one sample line of a Prometheus text scrape, or undefined when absent. */
function sample(scrape: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of scrape.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) return Number(match[3]);
  }
  return undefined;
}

const projections = [
  { name: 'widgets', eventTypes: ['WidgetMade'] },
  { name: 'gadgets', eventTypes: ['GadgetMade'] },
];

describe('GET /metrics', () => {
  let testDb: TestDb;
  let store: PostgresEventStore;
  let metrics: Metrics;
  let app: FastifyInstance;

  beforeAll(async () => {
    testDb = await createTestDb();
    store = createPostgresEventStore(testDb.db);
    metrics = createMetrics();
    app = await buildHttpApp({
      db: testDb.db,
      cursorKey: Buffer.alloc(32, 1),
      routes: [observabilityRoutes({ db: testDb.db, store }, { projections, metrics }), fixtureRoutes],
    });
  });
  afterAll(async () => {
    await app.close();
    await store.close();
    await testDb.drop();
  });

  const scrape = async () => {
    const response = await app.inject({ url: '/metrics' });
    expect(response.statusCode).toBe(200);
    return response.body;
  };

  it('serves the Prometheus text format without a credential', async () => {
    const response = await app.inject({ url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(response.body).toContain('# TYPE earshot_http_request_duration_seconds histogram');
    expect(response.body).toContain('# TYPE earshot_ingest_events_total counter');
  });

  it('includes the default process metrics', async () => {
    const body = await scrape();
    expect(sample(body, 'process_cpu_user_seconds_total')).toBeGreaterThanOrEqual(0);
    expect(sample(body, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
  });

  it('times requests by route pattern, not by raw URL', async () => {
    for (const id of ['1', '2', '3'])
      expect((await app.inject({ url: `/things/${id}` })).statusCode).toBe(200);
    const body = await scrape();
    const labels = { method: 'GET', route: '/things/:id', status: '200' };
    expect(sample(body, 'earshot_http_request_duration_seconds_count', labels)).toBe(3);
    expect(sample(body, 'earshot_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(3);
    expect(sample(body, 'earshot_http_request_duration_seconds_sum', labels)).toBeGreaterThan(0);
    expect(body).not.toContain('route="/things/1"');
  });

  it('times routes registered before it and labels the status of failed requests', async () => {
    await app.inject({ url: '/healthz' });
    await app.inject({ url: '/v1/things' });
    const body = await scrape();
    expect(
      sample(body, 'earshot_http_request_duration_seconds_count', { route: '/healthz', status: '200' }),
    ).toBe(1);
    expect(
      sample(body, 'earshot_http_request_duration_seconds_count', { route: '/v1/things', status: '401' }),
    ).toBe(1);
  });

  it('labels requests that match no route as unmatched', async () => {
    await app.inject({ url: '/no/such/path/42' });
    const body = await scrape();
    expect(
      sample(body, 'earshot_http_request_duration_seconds_count', { route: 'unmatched', status: '404' }),
    ).toBe(1);
    expect(body).not.toContain('/no/such/path');
  });

  it('reports the ingestion and delivery counters that capabilities increment', async () => {
    metrics.ingestEvents.inc({ result: 'accepted', transport: 'http' }, 3);
    metrics.ingestEvents.inc({ result: 'duplicate', transport: 'kafka' });
    metrics.deliveries.inc({ channel: 'webhook', outcome: 'retry_scheduled' });
    metrics.deliveries.inc({ channel: 'webhook', outcome: 'retry_scheduled' });
    metrics.matcherLagSeconds.set(1.5);
    const body = await scrape();
    expect(sample(body, 'earshot_ingest_events_total', { result: 'accepted', transport: 'http' })).toBe(3);
    expect(sample(body, 'earshot_ingest_events_total', { result: 'duplicate', transport: 'kafka' })).toBe(1);
    expect(sample(body, 'earshot_deliveries_total', { channel: 'webhook', outcome: 'retry_scheduled' })).toBe(
      2,
    );
    expect(sample(body, 'earshot_matcher_lag_seconds')).toBe(1.5);
  });

  it('reads the retry queue depth from the registered sources at scrape time', async () => {
    let depth = 4;
    const unregister = metrics.registerRetryQueueDepth(async () => depth);
    expect(sample(await scrape(), 'earshot_delivery_retry_queue_depth')).toBe(4);
    depth = 7;
    expect(sample(await scrape(), 'earshot_delivery_retry_queue_depth')).toBe(7);
    unregister();
    expect(sample(await scrape(), 'earshot_delivery_retry_queue_depth')).toBe(0);
  });

  it("reports each projection's lag from its checkpoint row and the event store", async () => {
    await store.append('widget-1', [{ type: 'WidgetMade', data: { n: 1 } }]);
    const second = await store.append('widget-2', [{ type: 'WidgetMade', data: { n: 2 } }]);
    await store.append('gadget-1', [{ type: 'GadgetMade', data: {} }]);
    await store.append('widget-3', [
      { type: 'WidgetMade', data: { n: 3 } },
      { type: 'WidgetMade', data: { n: 4 } },
    ]);
    await testDb.db.query('insert into projection_checkpoints (name, position) values ($1, $2)', [
      'widgets',
      second.position,
    ]);
    // The store counts only events no running transaction can still precede: one open elsewhere in
    // the cluster (another test file's) holds them back until it ends.
    for (const end = Date.now() + 30_000; Date.now() < end; ) {
      if ((await store.readAll({ eventTypes: ['WidgetMade', 'GadgetMade'] })).events.length === 5) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }

    let body = await scrape();
    expect(sample(body, 'earshot_projection_lag_events', { projection: 'widgets' })).toBe(2);
    // No checkpoint row yet: the projection has not started, so every event of its types is behind.
    expect(sample(body, 'earshot_projection_lag_events', { projection: 'gadgets' })).toBe(1);

    const head = await store.readAll({ eventTypes: ['WidgetMade'] });
    await testDb.db.query('update projection_checkpoints set position = $2 where name = $1', [
      'widgets',
      head.lastPosition,
    ]);
    body = await scrape();
    expect(sample(body, 'earshot_projection_lag_events', { projection: 'widgets' })).toBe(0);
  });

  it('stops reading projection lag once the app is closed', async () => {
    const other = createMetrics({ defaultMetrics: false });
    const closing = await buildHttpApp({
      db: testDb.db,
      cursorKey: Buffer.alloc(32, 1),
      routes: [observabilityRoutes({ db: testDb.db, store }, { projections, metrics: other })],
    });
    expect(
      sample((await closing.inject({ url: '/metrics' })).body, 'earshot_projection_lag_events', {
        projection: 'gadgets',
      }),
    ).toBe(1);
    await closing.close();
    expect(
      sample(await other.registry.metrics(), 'earshot_projection_lag_events', { projection: 'gadgets' }),
    ).toBe(undefined);
  });
});
