import type { FastifyPluginAsync } from 'fastify';
import pino from 'pino';
import { alertsProjection } from '../../projections/alerts/projection.ts';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { episodesProjection } from '../../projections/episodes/projection.ts';
import { matchesProjection } from '../../projections/matches/projection.ts';
import { createDisableTokens } from '../../src/alerts/disable-tokens.ts';
import { AlertService, entitiesReadModel } from '../../src/alerts/service.ts';
import type { Db } from '../../src/db/db.ts';
import { comparePositions, type EventStore, type RecordedEvent, START } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import type { IngestEvent } from '../../src/ingestion/events.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { matchingRoutes } from '../../src/matching/http/routes.ts';
import { PreviewService } from '../../src/matching/previews/preview.ts';
import { ALERT_MATCHED, type AlertMatchedEventData } from '../../src/matching/streams.ts';
import { verifyEmail } from '../../src/platform/organizations.ts';
import { type Consumer, readConsumerCheckpoint, runConsumer } from '../../src/subscriptions/consumer.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';
import { applyBatch, readCheckpoint } from '../../src/subscriptions/projection-runner.ts';
import { entityEvent } from '../fixtures/events.ts';
import { createDb, type Engine } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';

export const silentLog = pino({ level: 'silent' });

/** The newest event's position in the table: what "caught up" must reach. */
export async function headPosition(db: Db): Promise<string> {
  const { rows } = await db.query<{ head: string }>(
    `select transaction_id::text || '/' || global_position as head
       from events order by transaction_id desc, global_position desc limit 1`,
  );
  return rows[0]?.head ?? START;
}

/**
 * Events become readable only once every older transaction of the cluster has ended (other test
 * files share it), so "caught up" means: the reader's view has passed the head seen at the start
 * and nothing of the types is left after the checkpoint.
 */
async function caughtUp(store: EventStore, after: string, eventTypes: readonly string[], target: string) {
  const page = await store.readAll({ after, eventTypes, limit: 1 });
  return page.events.length === 0 && comparePositions(page.lastPosition, target) >= 0;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs a consumer with the real runner until it has handled every event appended so far. */
export async function runUntilCaughtUp(
  db: Db,
  store: EventStore,
  consumer: Consumer,
  options: { via?: EventStore } = {},
) {
  const target = await headPosition(db);
  const controller = new AbortController();
  const errors: unknown[] = [];
  const running = runConsumer(db, options.via ?? store, consumer, {
    signal: controller.signal,
    lockRetryMs: 20,
    retryDelayMs: 20,
    onError: (error) => errors.push(error),
  });
  try {
    for (let polls = 0; ; polls++) {
      if (errors.length > 0) throw errors[0];
      const checkpoint = await readConsumerCheckpoint(db, consumer);
      if (
        comparePositions(checkpoint, target) >= 0 ||
        (await caughtUp(store, checkpoint, consumer.eventTypes, target))
      )
        return;
      if (polls > 3000)
        throw new Error(`consumer ${consumer.name} did not reach ${target} (at ${checkpoint})`);
      await pause(10);
    }
  } finally {
    controller.abort();
    await running;
  }
}

/** Brings a read model up to every event appended so far. */
export async function project(db: Db, store: EventStore, projection: Projection) {
  const target = await headPosition(db);
  await db.query(
    'insert into projection_checkpoints (name, position) values ($1, $2) on conflict (name) do nothing',
    [projection.name, START],
  );
  for (let polls = 0; ; polls++) {
    const from = await readCheckpoint(db, projection.name);
    const page = await store.readAll({ after: from, eventTypes: projection.eventTypes, limit: 500 });
    if (page.events.length > 0) {
      if (!(await applyBatch(db, projection, from, page.lastPosition, page.events)))
        throw new Error('checkpoint moved under the test');
      continue;
    }
    if (comparePositions(page.lastPosition, target) >= 0) return;
    if (polls > 3000) throw new Error(`projection ${projection.name} did not reach ${target}`);
    await pause(10);
  }
}

export const ALERT_READ_MODELS = [
  entitiesProjection,
  episodesProjection,
  alertsProjection,
  matchesProjection,
];

/** A tenant with a verified address, the alert service and a clock on the real database. */
export async function pipelineFixture(engine: Engine = 'postgres') {
  const { db, drop } = await createDb(engine);
  const store = createPostgresEventStore(db, { pollIntervalMs: 20 });
  let clock = new Date('2026-11-20T12:00:00.000Z');
  const now = () => clock;
  const service = new AlertService({
    db,
    store,
    tokens: createDisableTokens(Buffer.alloc(32, 7)),
    entities: entitiesReadModel(db),
    now,
  });
  const tenant = await createTenant(db, 'ENTERPRISE');
  const other = await createTenant(db, 'ENTERPRISE');
  for (const t of [tenant, other]) await verifyEmail(db, t.organization.id, 'ops@example.com');
  const caller = { projectId: tenant.project.id, organizationId: tenant.organization.id };
  const deps = { db, store, log: silentLog, now };

  return {
    db,
    store,
    service,
    tenant,
    other,
    caller,
    deps,
    now,
    setClock(at: string | Date) {
      clock = new Date(at);
    },
    advance(ms: number) {
      clock = new Date(clock.getTime() + ms);
    },
    ingest: (events: readonly IngestEvent[]) => ingestEvents(store, events),
    /** Ingests an entity and brings the entities read model up to date (alerts resolve through it). */
    async entity(
      id: string,
      name: string,
      aliases: string[] = [],
      entityType: 'PERSON' | 'COMPANY' = 'COMPANY',
    ) {
      await ingestEvents(store, [entityEvent({ id, name, aliases, entity_type: entityType })]);
      await project(db, store, entitiesProjection);
    },
    async createAlert(entityId: string, overrides: Record<string, unknown> = {}, as = caller) {
      const entityType = (overrides.entity_type as string | undefined) ?? 'COMPANY';
      const { entity_type: _type, ...rest } = overrides;
      return service.create(as, {
        title: `Alert on ${entityId}`,
        entities: [{ entity_type: entityType, entity_id: entityId }],
        notifications: [{ type: 'EMAIL', email: 'ops@example.com' }],
        ...rest,
      });
    },
    async projectAll() {
      for (const projection of ALERT_READ_MODELS) await project(db, store, projection);
    },
    /** Every AlertMatched appended so far (waiting until the reader can see all of them). */
    async matches(): Promise<RecordedEvent<string, AlertMatchedEventData>[]> {
      const target = await headPosition(db);
      for (let polls = 0; ; polls++) {
        const events: RecordedEvent<string, AlertMatchedEventData>[] = [];
        let after = START;
        for (;;) {
          const page = await store.readAll({ after, eventTypes: [ALERT_MATCHED], limit: 1000 });
          events.push(...(page.events as RecordedEvent<string, AlertMatchedEventData>[]));
          after = page.lastPosition;
          if (page.events.length < 1000) break;
        }
        if (comparePositions(after, target) >= 0) return events;
        if (polls > 3000) throw new Error(`the reader did not reach ${target}`);
        await pause(10);
      }
    },
    async close() {
      await store.close();
      await drop();
    },
  };
}

export type PipelineFixture = Awaited<ReturnType<typeof pipelineFixture>>;

/** The matching routes (alert previews included) over the fixture, with any other routes given. */
export async function previewApp(f: PipelineFixture, routes: FastifyPluginAsync[] = []) {
  const previews = new PreviewService({ db: f.db, log: silentLog, now: f.now });
  const app = await buildHttpApp({
    db: f.db,
    cursorKey: Buffer.alloc(32, 5),
    routes: [matchingRoutes({ store: f.store, previews }), ...routes],
  });
  return { previews, app };
}
