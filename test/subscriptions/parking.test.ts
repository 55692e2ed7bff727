import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchesProjection } from '../../projections/matches/projection.ts';
import type { Db, Queryable } from '../../src/db/db.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import { createPostgresEventStore, type PostgresEventStore } from '../../src/eventstore/postgres.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import {
  type Consumer,
  checkpointName,
  consumerSubscriber,
  runConsumer,
} from '../../src/subscriptions/consumer.ts';
import { listParked, parkedCounts } from '../../src/subscriptions/parked.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';
import {
  projectionSubscriber,
  readCheckpoint,
  rebuildProjection,
  runProjection,
} from '../../src/subscriptions/projection-runner.ts';
import { retryParked } from '../../src/subscriptions/runner.ts';
import { episodeEvent } from '../fixtures/events.ts';
import { createTestDb, type TestDb } from '../support/db.ts';

const TENANTS = ['org-a', 'org-b', 'org-c'];
/** Short retries: a poison event is parked within a few hundred ms. */
const FAST = { retries: 2, retryDelayMs: 5, maxRetryDelayMs: 20, lockRetryMs: 20 };

interface Thing {
  tenant: string;
  /** The handler refuses it until `fixed`. */
  poison?: boolean;
}

/** Counts events per tenant; throws on a poison event (as a projection whose SQL refuses a value would). */
function tenantCounts(name: string, type: string, state: { fixed: boolean }): Projection {
  return {
    name,
    eventTypes: [type],
    async apply(tx, events) {
      for (const event of events) {
        const data = event.data as Thing;
        if (data.poison && !state.fixed) throw new Error('date/time field value out of range');
        await tx.query(
          `insert into ${name} (tenant, n) values ($1, 1) on conflict (tenant) do update set n = ${name}.n + 1`,
          [data.tenant],
        );
      }
    },
    async reset(tx) {
      await tx.query(`delete from ${name}`);
    },
  };
}

async function counts(db: Queryable, table: string): Promise<Record<string, number>> {
  const { rows } = await db.query<{ tenant: string; n: number }>(
    `select tenant, n from ${table} order by tenant`,
  );
  return Object.fromEntries(rows.map((row) => [row.tenant, row.n]));
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** One batch: an event per tenant, the poison in the middle, an event per tenant after it. */
async function appendBatchWithPoison(store: PostgresEventStore, type: string) {
  const poisonId = randomUUID();
  const events = [
    ...TENANTS.map((tenant) => ({ id: randomUUID(), type, data: { tenant } })),
    { id: poisonId, type, data: { tenant: 'org-a', poison: true } },
    ...TENANTS.map((tenant) => ({ id: randomUUID(), type, data: { tenant } })),
  ];
  await store.append(`things-${randomUUID()}`, events);
  return poisonId;
}

const appendLater = (store: PostgresEventStore, type: string) =>
  store.append(
    `things-${randomUUID()}`,
    TENANTS.map((tenant) => ({ id: randomUUID(), type, data: { tenant } })),
  );

async function parkedMetric(db: Db): Promise<string> {
  const metrics = createMetrics({ defaultMetrics: false });
  metrics.registerParkedEvents(() => parkedCounts(db));
  return metrics.registry.getSingleMetricAsString('earshot_parked_events');
}

describe('a subscription whose handler keeps failing on one event', () => {
  let testDb: TestDb;
  let db: Db;
  let store: PostgresEventStore;
  const logged: Record<string, unknown>[] = [];
  const log = pino(
    { level: 'error' },
    {
      write: (line: string) => {
        logged.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  );
  beforeAll(async () => {
    testDb = await createTestDb();
    db = testDb.db;
    store = createPostgresEventStore(db);
  });
  afterAll(async () => {
    await store.close();
    await testDb.drop();
  });

  it('parks the event in a projection, applies the rest of its batch and later batches for every tenant, and replays it after a fix', async () => {
    const name = 'tenant_counts';
    await db.exec(`create table ${name} (tenant text primary key, n integer not null)`);
    const state = { fixed: false };
    const projection = tenantCounts(name, 'TenantCounted', state);
    const poisonId = await appendBatchWithPoison(store, 'TenantCounted');

    const controller = new AbortController();
    const running = runProjection(db, store, projection, { signal: controller.signal, log, ...FAST });
    await waitFor(async () => (await counts(db, name))['org-c'] === 2);
    await appendLater(store, 'TenantCounted');
    await waitFor(async () => (await counts(db, name))['org-c'] === 3);
    controller.abort();
    await running;

    expect(await counts(db, name)).toEqual({ 'org-a': 3, 'org-b': 3, 'org-c': 3 });
    const [parked] = await listParked(db, name);
    expect(parked).toMatchObject({
      subscription: name,
      eventId: poisonId,
      type: 'TenantCounted',
      error: 'date/time field value out of range',
    });
    expect(parked!.attempts).toBeGreaterThanOrEqual(3);
    expect(await parkedCounts(db)).toEqual(new Map([[name, 1]]));
    expect(await parkedMetric(db)).toContain(`earshot_parked_events{subscription="${name}"} 1`);
    const parkedLogs = logged.filter((line) => line.eventId === poisonId);
    expect(parkedLogs).toHaveLength(1);
    expect(parkedLogs[0]).toMatchObject({ level: 50, subscription: name, position: parked!.position });

    // Still failing: stays parked, one more attempt counted.
    expect(await retryParked(db, store, projectionSubscriber(projection))).toEqual({
      replayed: 0,
      failing: 1,
      missing: 0,
    });
    expect((await listParked(db, name))[0]!.attempts).toBe(parked!.attempts + 1);

    state.fixed = true;
    expect(await retryParked(db, store, projectionSubscriber(projection))).toEqual({
      replayed: 1,
      failing: 0,
      missing: 0,
    });
    expect(await listParked(db, name)).toEqual([]);
    expect((await counts(db, name))['org-a']).toBe(4);
    expect(await parkedMetric(db)).not.toContain(`subscription="${name}"`);
  });

  it('keeps the matches read model moving for every tenant past a match whose published_at PostgreSQL refuses, parking it without retries', async () => {
    const matched = (tenant: string, publishedAt = '2026-11-20T06:00:00.000Z') => {
      const matchId = randomUUID();
      return {
        id: matchId,
        type: 'AlertMatched',
        data: {
          matchId,
          alertId: `alert-${tenant}`,
          projectId: `project-${tenant}`,
          organizationId: tenant,
          kind: 'ENTITY_MENTION',
          entityId: 'ent-1',
          entityType: 'COMPANY',
          sourceId: `episode-${matchId}`,
          sourceType: 'EPISODE',
          detectedAt: '2026-11-20T12:00:00.000Z',
          mentionCount: 1,
          mentionVariants: ['Acme'],
          relevance: 'on_target',
          roles: ['HOST'],
          windows: [],
          truncated: false,
          isBackfilled: false,
          language: 'en-US',
          episode: { ...episodeEvent().episode, published_at: publishedAt },
        },
      };
    };
    // 0001-01-01T00:00:00+01:00 in UTC: year 0, which PostgreSQL has not.
    const poison = matched('org-a', '0000-12-31T23:00:00.000Z');
    await store.append(`matches-${randomUUID()}`, [
      ...TENANTS.map((tenant) => matched(tenant)),
      poison,
      ...TENANTS.map((tenant) => matched(tenant)),
    ]);
    const perAlert = async () => {
      const { rows } = await db.query<{ alert_id: string; n: number }>(
        'select alert_id, count(*)::int as n from matches group by alert_id order by alert_id',
      );
      return Object.fromEntries(rows.map((row) => [row.alert_id, row.n]));
    };

    const controller = new AbortController();
    const running = runProjection(db, store, matchesProjection, { signal: controller.signal, log, ...FAST });
    await waitFor(async () => (await perAlert())['alert-org-c'] === 2);
    await store.append(
      `matches-${randomUUID()}`,
      TENANTS.map((tenant) => matched(tenant)),
    );
    await waitFor(async () => (await perAlert())['alert-org-c'] === 3);
    controller.abort();
    await running;

    expect(await perAlert()).toEqual({ 'alert-org-a': 3, 'alert-org-b': 3, 'alert-org-c': 3 });
    const parked = await listParked(db, matchesProjection.name);
    expect(parked.map((p) => p.eventId)).toEqual([poison.id]);
    expect(parked[0]!.error).toMatch(/out of range/);
    // PostgreSQL refused the value itself (SQLSTATE class 22): parked at its first failure, with
    // neither the batch nor the event retried, where an error without a SQLSTATE is (above).
    expect(parked[0]!.attempts).toBe(1);
    expect(await parkedMetric(db)).toContain('earshot_parked_events{subscription="matches"} 1');
  });

  it('parks the event in an effects-first consumer and moves its checkpoint past it', async () => {
    const state = { fixed: false };
    const handled: string[] = [];
    let starts = 0;
    const consumer: Consumer = {
      name: 'poison-consumer',
      eventTypes: ['TenantSeen'],
      batchSize: 100,
      async start() {
        starts++;
      },
      async handle(events: readonly RecordedEvent[]) {
        for (const event of events) {
          if ((event.data as Thing).poison && !state.fixed) throw new Error('provider refused the event');
        }
        handled.push(...events.map((event) => (event.data as Thing).tenant));
      },
    };
    const poisonId = await appendBatchWithPoison(store, 'TenantSeen');

    const controller = new AbortController();
    const running = runConsumer(db, store, consumer, { signal: controller.signal, log, ...FAST });
    await waitFor(async () => handled.length === 6);
    await appendLater(store, 'TenantSeen');
    await waitFor(async () => handled.length === 9);
    controller.abort();
    await running;

    expect(handled.filter((tenant) => tenant === 'org-b')).toHaveLength(3);
    const subscription = checkpointName(consumer);
    expect((await listParked(db, subscription)).map((p) => p.eventId)).toEqual([poisonId]);
    const last = (await store.readAll({ eventTypes: ['TenantSeen'] })).events.at(-1)!;
    expect(await readCheckpoint(db, subscription)).toBe(last.position);
    expect(starts).toBeGreaterThan(1);

    state.fixed = true;
    expect(await retryParked(db, store, consumerSubscriber(consumer))).toMatchObject({
      replayed: 1,
      failing: 0,
    });
    expect(await listParked(db, subscription)).toEqual([]);
  });

  it('parks the event during a rebuild instead of failing it, and a later rebuild forgets what now succeeds', async () => {
    const name = 'tenant_rebuilt';
    await db.exec(`create table ${name} (tenant text primary key, n integer not null)`);
    const state = { fixed: false };
    const projection = tenantCounts(name, 'TenantRebuilt', state);
    const poisonId = await appendBatchWithPoison(store, 'TenantRebuilt');
    await appendLater(store, 'TenantRebuilt');

    const applied = await rebuildProjection(db, store, projection, { log, ...FAST, batchSize: 100 });
    expect(applied).toBe(10);
    expect(await counts(db, name)).toEqual({ 'org-a': 3, 'org-b': 3, 'org-c': 3 });
    expect((await listParked(db, name)).map((p) => p.eventId)).toEqual([poisonId]);

    state.fixed = true;
    await rebuildProjection(db, store, projection, FAST);
    expect(await counts(db, name)).toEqual({ 'org-a': 4, 'org-b': 3, 'org-c': 3 });
    expect(await listParked(db, name)).toEqual([]);
  });
});
