import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { alertsProjection } from '../../projections/alerts/projection.ts';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { alertsCapability } from '../../src/alerts/capability.ts';
import { createDisableTokens } from '../../src/alerts/disable-tokens.ts';
import { AlertService, entitiesReadModel } from '../../src/alerts/service.ts';
import type { ChannelLister } from '../../src/chat/connections.ts';
import { loadConfig } from '../../src/config.ts';
import { createSecretBox } from '../../src/crypto/secret-box.ts';
import type { Db } from '../../src/db/db.ts';
import { type EventStore, START } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import type { Plan } from '../../src/platform/organizations.ts';
import {
  createOrganization,
  createProject,
  setAlertPacks,
  verifyEmail,
} from '../../src/platform/organizations.ts';
import type { Runtime } from '../../src/runtime.ts';
import { createDb, createTestDb, type Engine } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';

export const ENTITY = { entity_type: 'PERSON', entity_id: 'ent-jensen' } as const;

/** Puts an entity into the entities read model through its own projection. */
export async function seedEntity(db: Db, id = ENTITY.entity_id, entityType = 'PERSON', slug = `${id}-slug`) {
  await db.transaction((tx) =>
    entitiesProjection.apply(tx, [
      {
        id: randomBytes(8).toString('hex'),
        streamId: `entity-${id}`,
        revision: 0,
        position: '1/1',
        type: 'EntityUpserted',
        data: {
          type: 'entity.upserted',
          event_id: id,
          occurred_at: '2026-11-01T00:00:00Z',
          entity: { id, slug, name: `Name of ${id}`, entity_type: entityType },
        },
        metadata: {},
        recordedAt: new Date(),
      },
    ]),
  );
}

/** Folds the alert events after `after` into the read model; returns the position reached. */
export async function projectAlerts(db: Db, store: EventStore, after = START) {
  for (;;) {
    const page = await store.readAll({ after, eventTypes: alertsProjection.eventTypes, limit: 500 });
    if (page.events.length > 0) await db.transaction((tx) => alertsProjection.apply(tx, page.events));
    if (page.lastPosition === after || page.events.length === 0) return page.lastPosition;
    after = page.lastPosition;
  }
}

const comparePositions = (a: string, b: string) => {
  const [a1, a2] = a.split('/').map(BigInt) as [bigint, bigint];
  const [b1, b2] = b.split('/').map(BigInt) as [bigint, bigint];
  return a1 === b1 ? Number(a2 - b2) : a1 < b1 ? -1 : 1;
};

export const ROOT_KEY = Buffer.alloc(32, 3);

export async function alertsFixture(engine: Engine, plan: Plan = 'TEAM') {
  const { db, drop } = await createDb(engine);
  const store = createPostgresEventStore(db, { pollIntervalMs: 50 });
  const tokens = createDisableTokens(ROOT_KEY);
  const box = createSecretBox(ROOT_KEY);
  let clock = new Date('2026-11-20T10:00:00.000Z');
  const now = () => {
    clock = new Date(clock.getTime() + 1000);
    return clock;
  };
  let position = START;
  const service = new AlertService({ db, store, tokens, entities: entitiesReadModel(db), now });
  // Keys are not needed here (the HTTP tests make them), so no key is minted.
  const organization = await createOrganization(db, { name: 'Acme', plan });
  const project = await createProject(db, { organizationId: organization.id, name: 'Main' });
  const tenant = { organization, project };
  const caller = { projectId: project.id, organizationId: organization.id };
  await seedEntity(db);
  await verifyEmail(db, tenant.organization.id, 'ops@example.com');
  return {
    db,
    store,
    tokens,
    box,
    now,
    service,
    tenant,
    caller,
    setAlertPacks: (n: number) => setAlertPacks(db, tenant.organization.id, n),
    /**
     * Catches the read model up with every event committed so far, as the projection runner does
     * in the server. Events become readable only once no older transaction in the cluster is still
     * open (the store's read horizon), so this polls until the reader has passed the newest one.
     */
    async project(options: { fromStart?: boolean } = {}) {
      if (options.fromStart) position = START;
      const { rows } = await db.query<{ head: string | null }>(
        `select transaction_id::text || '/' || global_position as head
           from events order by transaction_id desc, global_position desc limit 1`,
      );
      const target = rows[0]?.head ?? START;
      for (let polls = 0; ; polls++) {
        position = await projectAlerts(db, store, position);
        if (comparePositions(position, target) >= 0) return;
        if (polls > 500) throw new Error(`the read model did not reach ${target} (at ${position})`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    async close() {
      await store.close();
      await drop();
    },
  };
}

export type AlertsFixture = Awaited<ReturnType<typeof alertsFixture>>;

export const alertBody = (overrides: Record<string, unknown> = {}) => ({
  title: 'Jensen on podcasts',
  entities: [ENTITY],
  notifications: [{ type: 'EMAIL', email: 'ops@example.com' }],
  ...overrides,
});

/** The app with the alerts capability on the real PostgreSQL, and two tenants (A and B) with keys. */
export async function httpFixture(options: { listChannels?: ChannelLister } = {}) {
  const testDb = await createTestDb();
  const { db } = testDb;
  const store = createPostgresEventStore(db, { pollIntervalMs: 50 });
  const config = loadConfig({ EARSHOT_WEBHOOK_ALLOW_CIDRS: '' });
  const runtime: Runtime = {
    config,
    db,
    store,
    secretKey: ROOT_KEY,
    log: pino({ level: 'silent' }),
    now: () => new Date(),
  };
  const capability = alertsCapability(runtime, {
    listChannels: options.listChannels ?? (async () => []),
  });
  const app = await buildHttpApp({ db, cursorKey: Buffer.alloc(32, 9), routes: capability.routes ?? [] });
  const a = await createTenant(db, 'TEAM');
  const b = await createTenant(db, 'TEAM');
  for (const tenant of [a, b]) await verifyEmail(db, tenant.organization.id, 'ops@example.com');
  await seedEntity(db);
  let position = START;
  return {
    app,
    db,
    store,
    capability,
    a,
    b,
    async project() {
      for (let polls = 0; polls < 500; polls++) {
        const { rows } = await db.query<{ head: string }>(
          `select transaction_id::text || '/' || global_position as head
             from events order by transaction_id desc, global_position desc limit 1`,
        );
        position = await projectAlerts(db, store, position);
        if (!rows[0] || comparePositions(position, rows[0].head) >= 0) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error('the alerts read model did not catch up');
    },
    async close() {
      await app.close();
      await store.close();
      await testDb.drop();
    },
  };
}

export type HttpFixture = Awaited<ReturnType<typeof httpFixture>>;
