import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertStream } from '../../src/alerts/alert.ts';
import { alertQuotaStream, QuotaReader } from '../../src/alerts/quota.ts';
import { AlertService, entitiesReadModel } from '../../src/alerts/service.ts';
import { EarshotError } from '../../src/errors.ts';
import { createOrganization, createProject, verifyEmail } from '../../src/platform/organizations.ts';
import { createWebhookConnection, revokeWebhookConnection } from '../../src/webhooks/connections.ts';
import { ENGINES } from '../support/db.ts';
import { type AlertsFixture, alertBody, alertsFixture, ENTITY } from './support.ts';

async function failure(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(EarshotError);
    return error as EarshotError & { resolve?: unknown };
  }
  throw new Error('expected a failure');
}

describe.each(ENGINES)('the alert command handler on %s', (engine) => {
  let f: AlertsFixture;
  beforeAll(async () => {
    f = await alertsFixture(engine);
  });
  afterAll(async () => {
    await f.close();
  });

  it('creates an alert and answers with it built from the appended events', async () => {
    const alert = await f.service.create(
      f.caller,
      alertBody({ description: 'GPU talk', filters: { languages: ['EN'] } }),
    );
    expect(alert).toMatchObject({
      project_id: f.caller.projectId,
      organization_id: f.caller.organizationId,
      title: 'Jensen on podcasts',
      description: 'GPU talk',
      kind: 'ENTITY_MENTION',
      delivery_cadence: 'REALTIME',
      entities: [ENTITY],
      notifications: [{ type: 'EMAIL', email: 'ops@example.com' }],
      filters: { languages: ['en'] },
      is_active: true,
      status: 'active',
    });
    expect(alert.id).toMatch(/^[0-9A-Za-z]{22}$/);
    const events = await f.store.readStream(alertStream(alert.id));
    expect(events.map((e) => e.type)).toEqual(['AlertCreated']);
    expect(await f.service.get(f.caller, alert.id)).toEqual(alert);
  });

  it('resolves an entity given by slug to its id', async () => {
    const alert = await f.service.create(
      f.caller,
      alertBody({ entities: [{ entity_type: 'PERSON', entity_id: 'ent-jensen-slug' }] }),
    );
    expect(alert.entities).toEqual([ENTITY]);
  });

  it('rejects an entity that is unknown or of another type with unresolved_reference', async () => {
    const unknown = await failure(
      f.service.create(f.caller, alertBody({ entities: [{ entity_type: 'PERSON', entity_id: 'nobody' }] })),
    );
    expect(unknown.errorCode).toBe('unresolved_reference');
    const wrongType = await failure(
      f.service.create(
        f.caller,
        alertBody({ entities: [{ entity_type: 'COMPANY', entity_id: ENTITY.entity_id }] }),
      ),
    );
    expect(wrongType.errorCode).toBe('unresolved_reference');
  });

  it('rejects an email address not verified for the organization', async () => {
    const error = await failure(
      f.service.create(
        f.caller,
        alertBody({ notifications: [{ type: 'EMAIL', email: 'stranger@example.com' }] }),
      ),
    );
    expect(error.errorCode).toBe('email_not_verified');
    expect(error.status).toBe(422);
  });

  it("rejects a revoked webhook connection and another project's connection", async () => {
    const deps = {
      db: f.db,
      box: f.box,
      now: () => new Date(),
      checkUrl: async (url: string) => ({
        ok: true as const,
        url: new URL(url),
        hostname: 'x',
        addresses: [],
      }),
    };
    const mine = await createWebhookConnection(deps, {
      projectId: f.caller.projectId,
      url: 'https://hooks.example.com/a',
    });
    const other = await createProject(f.db, { organizationId: f.caller.organizationId, name: 'Other' });
    const theirs = await createWebhookConnection(deps, {
      projectId: other.id,
      url: 'https://hooks.example.com/b',
    });
    const ok = await f.service.create(
      f.caller,
      alertBody({ notifications: [{ type: 'WEBHOOK', webhook_connection_id: mine.id }] }),
    );
    expect(ok.notifications).toEqual([{ type: 'WEBHOOK', webhook_connection_id: mine.id }]);
    const foreign = await failure(
      f.service.create(
        f.caller,
        alertBody({ notifications: [{ type: 'WEBHOOK', webhook_connection_id: theirs.id }] }),
      ),
    );
    expect(foreign.errorCode).toBe('connection_unavailable');
    await revokeWebhookConnection(deps, f.caller.projectId, mine.id);
    const revoked = await failure(
      f.service.update(f.caller, ok.id, {
        notifications: [{ type: 'WEBHOOK', webhook_connection_id: mine.id }],
      }),
    );
    expect(revoked.errorCode).toBe('connection_unavailable');
  });

  it('pauses and resumes through PATCH is_active, and soft-deletes', async () => {
    const alert = await f.service.create(f.caller, alertBody());
    const paused = await f.service.update(f.caller, alert.id, { is_active: false });
    expect(paused).toMatchObject({ is_active: false, status: 'paused' });
    expect(paused.paused_at).toBeDefined();
    const resumed = await f.service.update(f.caller, alert.id, { is_active: true, title: 'Back' });
    expect(resumed).toMatchObject({ is_active: true, status: 'active', title: 'Back' });
    await f.service.delete(f.caller, alert.id);
    expect((await failure(f.service.get(f.caller, alert.id))).errorCode).toBe('alert_not_found');
    expect((await failure(f.service.delete(f.caller, alert.id))).errorCode).toBe('alert_not_found');
    const types = (await f.store.readStream(alertStream(alert.id))).map((e) => e.type);
    expect(types).toEqual(['AlertCreated', 'AlertPaused', 'AlertUpdated', 'AlertResumed', 'AlertDeleted']);
  });

  it("hides another project's alert as not found", async () => {
    const alert = await f.service.create(f.caller, alertBody());
    const other = { projectId: 'someone-else', organizationId: f.caller.organizationId };
    expect((await failure(f.service.get(other, alert.id))).errorCode).toBe('alert_not_found');
    expect((await failure(f.service.update(other, alert.id, { title: 'x' }))).errorCode).toBe(
      'alert_not_found',
    );
    expect((await failure(f.service.delete(other, alert.id))).errorCode).toBe('alert_not_found');
  });

  it('loses no update when many PATCHes race on one alert', async () => {
    const alert = await f.service.create(f.caller, alertBody());
    const titles = Array.from({ length: 8 }, (_, i) => `title ${i}`);
    const results = await Promise.allSettled(
      titles.map((title) => f.service.update(f.caller, alert.id, { title })),
    );
    const succeeded = results.filter((r) => r.status === 'fulfilled');
    for (const r of results) if (r.status === 'rejected') expect((r.reason as EarshotError).status).toBe(409);
    expect(succeeded.length).toBeGreaterThan(0);
    const updates = (await f.store.readStream(alertStream(alert.id))).filter(
      (e) => e.type === 'AlertUpdated',
    );
    // Every acknowledged PATCH is one recorded event; the last recorded one is the alert's title.
    expect(updates).toHaveLength(succeeded.length);
    const current = await f.service.get(f.caller, alert.id);
    expect(current.title).toBe((updates.at(-1)!.data as { changes: { title: string } }).changes.title);
  });
});

describe.each(ENGINES)('the active-alert allowance on %s', (engine) => {
  let f: AlertsFixture;
  beforeAll(async () => {
    f = await alertsFixture(engine, 'TEAM');
  });
  afterAll(async () => {
    await f.close();
  });

  it('lets exactly the allowance through when many creates race, and counts no paused alert', async () => {
    const paused = await f.service.create(f.caller, alertBody({ is_active: false }));
    const results = await Promise.allSettled(
      Array.from({ length: 14 }, () => f.service.create(f.caller, alertBody())),
    );
    const created = results.filter((r) => r.status === 'fulfilled');
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as EarshotError] : []));
    expect(created).toHaveLength(10);
    expect(refused.map((e) => e.errorCode)).toEqual(Array(4).fill('add_on_required'));
    expect(refused[0]).toMatchObject({
      status: 402,
      resolve: { message: expect.stringContaining('Alerts Pack') },
    });

    const resume = await failure(f.service.update(f.caller, paused.id, { is_active: true }));
    expect(resume.errorCode).toBe('add_on_required');

    // Pausing one frees its slot; an Alerts Pack adds five more.
    const first = (created[0] as PromiseFulfilledResult<{ id: string }>).value;
    await f.service.update(f.caller, first.id, { is_active: false });
    await f.service.update(f.caller, paused.id, { is_active: true });
    await f.setAlertPacks(1);
    for (let i = 0; i < 5; i++) await f.service.create(f.caller, alertBody());
    expect((await failure(f.service.create(f.caller, alertBody()))).errorCode).toBe('add_on_required');
    await f.service.delete(f.caller, paused.id);
    await f.service.create(f.caller, alertBody());
  });

  it('never exceeds the allowance when two processes create at once', async () => {
    const org = await createOrganization(f.db, { name: 'Twin', plan: 'TEAM' });
    const project = await createProject(f.db, { organizationId: org.id, name: 'P' });
    const caller = { projectId: project.id, organizationId: org.id };
    await verifyEmail(f.db, org.id, 'ops@example.com');
    // A second service instance has its own in-process queue: only the slot stream's expected
    // revision keeps the two apart, as between two server processes.
    const other = new AlertService({
      db: f.db,
      store: f.store,
      tokens: f.tokens,
      entities: entitiesReadModel(f.db),
      now: f.now,
    });
    const results = await Promise.allSettled(
      Array.from({ length: 16 }, (_, i) => (i % 2 ? other : f.service).create(caller, alertBody())),
    );
    const created = results.filter((r) => r.status === 'fulfilled');
    const codes = results.flatMap((r) =>
      r.status === 'rejected' ? [(r.reason as EarshotError).errorCode] : [],
    );
    expect(created).toHaveLength(10);
    expect(new Set(codes)).toEqual(new Set(['add_on_required']));
  });

  it('heals a slot left behind by an alert that is no longer active', async () => {
    const org = await createOrganization(f.db, { name: 'Crashy', plan: 'TEAM' });
    const project = await createProject(f.db, { organizationId: org.id, name: 'P' });
    const caller = { projectId: project.id, organizationId: org.id };
    await verifyEmail(f.db, org.id, 'ops@example.com');
    // Ten slots held by alerts that never got their AlertCreated appended (a crash in between,
    // two minutes ago: longer than any request).
    const longAgo = new Date(f.now().getTime() - 120_000).toISOString();
    await f.store.append(
      alertQuotaStream(org.id),
      Array.from({ length: 10 }, (_, i) => ({
        type: 'AlertSlotTaken',
        data: { organizationId: org.id, alertId: `ghost-${i}`, takenAt: longAgo },
      })),
    );
    const alert = await f.service.create(caller, alertBody());
    expect(alert.is_active).toBe(true);
  });

  it('counts a slot just taken for an alert not yet created: a create in flight in another process', async () => {
    const org = await createOrganization(f.db, { name: 'Busy', plan: 'TEAM' });
    const project = await createProject(f.db, { organizationId: org.id, name: 'P' });
    const caller = { projectId: project.id, organizationId: org.id };
    await verifyEmail(f.db, org.id, 'ops@example.com');
    for (let i = 0; i < 9; i++) await f.service.create(caller, alertBody());
    await f.store.append(alertQuotaStream(org.id), [
      {
        type: 'AlertSlotTaken',
        data: { organizationId: org.id, alertId: 'in-flight', takenAt: f.now().toISOString() },
      },
    ]);
    expect((await failure(f.service.create(caller, alertBody()))).errorCode).toBe('add_on_required');
  });

  it('reads the slots appended since its last read as a whole read of the stream would', async () => {
    const org = await createOrganization(f.db, { name: 'Slots', plan: 'TEAM' });
    const stream = alertQuotaStream(org.id);
    // Two readers kept across the appends, as in two processes; a new reader reads the whole stream.
    const readers = [new QuotaReader(f.store), new QuotaReader(f.store)];
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let step = 0; step < 60; step++) {
      const events = Array.from({ length: 1 + next(3) }, () => {
        const alertId = `alert-${next(8)}`;
        return next(3)
          ? {
              type: 'AlertSlotTaken',
              data: { organizationId: org.id, alertId, takenAt: `2026-01-01T00:00:${step}Z` },
            }
          : {
              type: 'AlertSlotReleased',
              data: { organizationId: org.id, alertId, releasedAt: '2026-01-02T00:00:00Z' },
            };
      });
      await f.store.append(stream, events);
      const whole = await new QuotaReader(f.store).load(org.id);
      // Each reader misses some appends, and both may read at once.
      const kept = await Promise.all(readers.filter(() => next(3) > 0).map((reader) => reader.load(org.id)));
      for (const quota of kept) {
        expect(quota.revision).toBe(whole.revision);
        expect([...quota.state]).toEqual([...whole.state]);
      }
    }
    const whole = await new QuotaReader(f.store).load(org.id);
    expect(whole.revision).toBe((await f.store.readStream(stream)).length - 1);
  });

  it('reads from the event it last read, and reads whole a stream that no longer holds it (a store restored)', async () => {
    const org = await createOrganization(f.db, { name: 'Kept', plan: 'TEAM' });
    const elsewhere = await createOrganization(f.db, { name: 'Elsewhere', plan: 'TEAM' });
    const take = (organizationId: string, alertId: string) =>
      f.store.append(alertQuotaStream(organizationId), [
        { type: 'AlertSlotTaken', data: { organizationId, alertId, takenAt: '2026-01-01T00:00:00Z' } },
      ]);
    // The real store, seen through a door that can swap the stream's history for another one.
    const asked: (number | undefined)[] = [];
    let restored = false;
    const reader = new QuotaReader({
      readStream: (streamId, options) => {
        asked.push(options?.fromRevision);
        return f.store.readStream(restored ? alertQuotaStream(elsewhere.id) : streamId, options);
      },
    });
    const slots = async () => [...(await reader.load(org.id)).state.keys()];
    for (const id of ['a', 'b', 'c']) await take(org.id, id);
    expect(await slots()).toEqual(['a', 'b', 'c']);
    await take(org.id, 'd');
    expect(await slots()).toEqual(['a', 'b', 'c', 'd']);
    expect(await slots()).toEqual(['a', 'b', 'c', 'd']);
    expect(asked).toEqual([undefined, 2, 3]);

    for (const id of ['w', 'x', 'y', 'z']) await take(elsewhere.id, id);
    restored = true;
    expect(await slots()).toEqual(['w', 'x', 'y', 'z']);
    expect((await reader.load(org.id)).revision).toBe(3);
    expect(asked.slice(3)).toEqual([3, undefined, 3]);
  });

  it('refuses every alert on STARTER and GROWTH with resolve', async () => {
    for (const plan of ['STARTER', 'GROWTH'] as const) {
      const org = await createOrganization(f.db, { name: plan, plan });
      const project = await createProject(f.db, { organizationId: org.id, name: 'P' });
      const error = await failure(
        f.service.create({ projectId: project.id, organizationId: org.id }, alertBody({ is_active: false })),
      );
      expect(error).toMatchObject({
        status: 402,
        errorCode: 'plan_does_not_support_alerts',
        resolve: { message: expect.any(String) },
      });
    }
  });
});
