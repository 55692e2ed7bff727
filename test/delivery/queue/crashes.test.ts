import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertStream } from '../../../src/alerts/alert.ts';
import type { Db } from '../../../src/db/db.ts';
import { deliveryStream } from '../../../src/delivery/delivery.ts';
import { crashLimit, parseRetrySchedule } from '../../../src/delivery/queue/schedule.ts';
import { type DelivererDeps, runDeliveryWorker } from '../../../src/delivery/queue/worker.ts';
import type { EventStore } from '../../../src/eventstore/port.ts';
import { checkWebhookUrl, parseAllowCidrs } from '../../../src/webhooks/address-rule.ts';
import { createWebhookConnection } from '../../../src/webhooks/connections.ts';
import { eventually } from '../../e2e/harness.ts';
import { type DeliveryFixture, deliveryFixture, deliveryRows } from '../support.ts';

/**
 * Attempts that throw instead of recording an outcome (docs/delivery.md, Crashed attempts). They are
 * made to throw through the dependencies the deliverer is given, as a bug or an outage would: the
 * event store reading an alert's stream, the database looking a connection up or reading match
 * copies, the store appending an ending.
 */
describe('crashed delivery attempts', () => {
  let f: DeliveryFixture;
  let app: FastifyInstance;
  beforeAll(async () => {
    f = await deliveryFixture({ env: { EARSHOT_RETRY_SCHEDULE: '5s,1m,1h' } });
    app = await f.app();
  });
  afterAll(async () => {
    await app?.close();
    await f?.close();
  });

  const crash = () => Promise.reject(new Error('the attempt crashed here (test)'));

  /** A store whose reads of these alerts' streams throw while `failing()` holds. */
  const alertReadsFail = (alertId: string, failing: () => boolean = () => true): EventStore => ({
    ...f.store,
    readStream: (streamId, options) =>
      failing() && streamId === alertStream(alertId) ? crash() : f.store.readStream(streamId, options),
  });

  /** A database whose statements naming `value` among their parameters throw while `failing()` holds. */
  const statementsNaming = (value: string, failing: () => boolean, text = ''): Db => ({
    ...f.db,
    query: (sql, params) =>
      sql.includes(text) && JSON.stringify(params ?? []).includes(value) && failing()
        ? crash()
        : f.db.query(sql, params),
  });

  async function webhookTo(path: string) {
    const connection = await createWebhookConnection(
      {
        db: f.db,
        box: f.box,
        now: f.clock.now,
        checkUrl: (url) => checkWebhookUrl(url, { allow: parseAllowCidrs(['127.0.0.0/8']) }),
      },
      { projectId: f.tenant.project.id, url: f.receiver.url(path) },
    );
    const alert = await f.createAlert({
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: connection.id }],
    });
    return { connection, alert };
  }

  const queueRow = async (deliveryId: string) =>
    (
      await f.db.query<{ crashes: number; due_at: Date; lease_owner: string | null }>(
        'select crashes, due_at, lease_owner from delivery_queue where delivery_id = $1',
        [deliveryId],
      )
    ).rows[0];
  const eventTypes = async (deliveryId: string) =>
    (await f.store.readStream(deliveryStream(deliveryId))).map((e) => e.type);

  /** The delivery's attempt crashes `times` in a row, the clock moved to each retry. */
  async function crashRepeatedly(deps: DelivererDeps, deliveryId: string, times: number) {
    for (let i = 0; i < times; i++) {
      const before = (await queueRow(deliveryId))!.crashes;
      expect(await f.attemptDue('test', deps)).toBe(1);
      const row = (await queueRow(deliveryId))!;
      expect(row.crashes).toBe(before + 1);
      f.clock.set(row.due_at);
    }
  }

  const limit = crashLimit(parseRetrySchedule('5s,1m,1h'));
  const REASON = `attempt_crashed: gave up after the attempt crashed ${limit} times in a row`;

  it('ends a delivery whose attempts keep crashing after the bound, backing off, with the end in its stream and REST view', async () => {
    // The schedule lasts 1 h 1 m 5 s; crashes back off 30 s, 1 m, …, 32 m: 8 crashes cover it.
    expect(limit).toBe(8);
    const alert = await f.createAlert(); // two email recipients, a chat channel, a webhook
    const deps: DelivererDeps = { ...f.delivererDeps, store: alertReadsFail(alert.id) };
    await f.match(alert.id);
    await f.fanOut();
    await f.project();
    const ids = (await deliveryRows(f.db, alert.id)).map((r) => r.id); // CHAT, EMAIL, WEBHOOK
    const sent = [f.receiver.requests.length, f.smtp.messages.length, f.slack.posted.length];
    const firstCrash = f.clock.now().getTime();

    for (let crashes = 1; crashes < limit; crashes++) {
      expect(await f.attemptDue('test', deps)).toBe(3);
      const delay = 30_000 * 2 ** (crashes - 1);
      for (const id of ids) {
        expect(await queueRow(id)).toEqual({
          crashes,
          due_at: new Date(f.clock.now().getTime() + delay),
          lease_owner: null,
        });
      }
      await f.project();
      expect((await deliveryRows(f.db, alert.id)).map((r) => r.status)).toEqual([
        'PENDING',
        'PENDING',
        'PENDING',
      ]);
      f.clock.advance(delay - 1);
      expect(await f.attemptDue('test', deps)).toBe(0); // backed off: not a millisecond early
      f.clock.advance(1);
    }
    // The last crash spends the budget: the claim right after it ends each delivery.
    expect(await f.attemptDue('test', deps)).toBe(6);
    expect(f.clock.now().getTime() - firstCrash).toBe(3_810_000); // ≥ the schedule's 3 665 s
    for (const id of ids) expect(await queueRow(id)).toBeUndefined();
    expect(await f.attemptDue('test', deps)).toBe(0);

    await f.project();
    const rows = await deliveryRows(f.db, alert.id);
    expect(rows.map((r) => [r.channel, r.status, r.error_message, r.attempts])).toEqual([
      ['CHAT', 'FAILED', REASON, 0],
      ['EMAIL', 'FAILED', REASON, 0],
      ['WEBHOOK', 'ABANDONED', REASON, 0],
    ]);
    expect(await eventTypes(ids[0]!)).toEqual(['DeliveryCreated', 'DeliveryFailed']);
    expect(await eventTypes(ids[1]!)).toEqual(['DeliveryCreated', 'DeliveryFailed']);
    expect(await eventTypes(ids[2]!)).toEqual(['DeliveryCreated', 'DeliveryAbandoned']);
    expect([f.receiver.requests.length, f.smtp.messages.length, f.slack.posted.length]).toEqual(sent);

    const response = await app.inject({ url: `/v1/alerts/deliveries/${ids[2]}`, headers: f.tenant.headers });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      status: 'ABANDONED',
      error_message: REASON,
      attempt_count: 0,
      attempts: [],
      has_webhook_payload: false,
    });
    expect(response.json()).not.toHaveProperty('next_attempt_at');
    await f.updateAlert(alert.id, { is_active: false }); // stays within the plan's active alerts
  });

  it('sends a delivery once after crashes short of the bound, and counts again from 0 after an attempt that completes', async () => {
    const { connection, alert } = await webhookTo('/flaky');
    let crashesLeft = 0;
    const deps: DelivererDeps = {
      ...f.delivererDeps,
      channels: {
        ...f.delivererDeps.channels,
        db: statementsNaming(connection.id, () => crashesLeft-- > 0),
      },
    };
    await f.match(alert.id);
    await f.fanOut();
    await f.project();
    const [row] = await deliveryRows(f.db, alert.id);
    const id = row!.id;

    crashesLeft = limit - 1;
    await crashRepeatedly(deps, id, limit - 1);
    expect(await queueRow(id)).toMatchObject({ crashes: limit - 1 });
    // This attempt completes: the receiver fails it, the schedule takes over, the count starts again.
    f.receiver.respondWith({ status: 503, body: 'down' });
    expect(await f.attemptDue('test', deps)).toBe(1);
    expect(await queueRow(id)).toEqual({
      crashes: 0,
      due_at: new Date(f.clock.now().getTime() + 5_000),
      lease_owner: null,
    });
    f.clock.advance(5_000);

    crashesLeft = limit - 1; // 14 crashes in all, never `limit` in a row
    await crashRepeatedly(deps, id, limit - 1);
    expect(await f.attemptDue('test', deps)).toBe(1);

    expect(await queueRow(id)).toBeUndefined();
    expect(await eventTypes(id)).toEqual(['DeliveryCreated', 'DeliveryAttemptFailed', 'DeliverySent']);
    await f.project();
    expect(await deliveryRows(f.db, alert.id)).toEqual([
      expect.objectContaining({ status: 'SENT', attempts: 2, error_message: null }),
    ]);
    const posts = f.receiver.requests.filter((r) => r.path === '/flaky');
    expect(posts.map((r) => r.headers['webhook-id'])).toEqual([id, id]); // the 503, then the one sent
    await f.updateAlert(alert.id, { is_active: false });
  });

  it('keeps the row, and ends the delivery later, when the end cannot be recorded', async () => {
    const { connection, alert } = await webhookTo('/doomed');
    let storeDown = false;
    await f.match(alert.id);
    await f.fanOut();
    await f.project();
    const id = (await deliveryRows(f.db, alert.id))[0]!.id;
    const stream = deliveryStream(id);
    const store: EventStore = {
      ...f.store,
      append: (streamId, events, options) =>
        storeDown && streamId === stream ? crash() : f.store.append(streamId, events, options),
      appendMany: (appends) =>
        storeDown && appends.some((a) => a.streamId === stream) ? crash() : f.store.appendMany(appends),
    };
    const deps: DelivererDeps = {
      ...f.delivererDeps,
      store,
      channels: { ...f.delivererDeps.channels, db: statementsNaming(connection.id, () => true) },
    };
    await crashRepeatedly(deps, id, limit - 1);
    storeDown = true;
    // The last crash, then the claim that would end the delivery: its append fails, a crash like
    // any other, counted, and backed off again from 30 s.
    expect(await f.attemptDue('test', deps)).toBe(2);
    expect(await queueRow(id)).toEqual({
      crashes: limit + 1,
      due_at: new Date(f.clock.now().getTime() + 30_000),
      lease_owner: null,
    });
    expect(await eventTypes(id)).toEqual(['DeliveryCreated']);

    f.clock.advance(30_000);
    expect(await f.attemptDue('test', deps)).toBe(1);
    expect(await queueRow(id)).toMatchObject({ crashes: limit + 2 });
    expect(await queueRow(id)).toMatchObject({ due_at: new Date(f.clock.now().getTime() + 60_000) });

    storeDown = false;
    f.clock.advance(60_000);
    expect(await f.attemptDue('test', deps)).toBe(1);
    expect(await queueRow(id)).toBeUndefined();
    const events = await f.store.readStream(stream);
    expect(events.map((e) => [e.type, (e.data as { reason?: string }).reason])).toEqual([
      ['DeliveryCreated', undefined],
      ['DeliveryAbandoned', `attempt_crashed: gave up after the attempt crashed ${limit + 2} times in a row`],
    ]);
    expect(f.receiver.requests.filter((r) => r.path === '/doomed')).toEqual([]);
    await f.updateAlert(alert.id, { is_active: false });
  });

  it("does not spend the crash budget of the deliveries claimed with a crashing one: a crashed delivery's next attempt reads alone", async () => {
    const { alert } = await webhookTo('/batch-mates');
    const poison = await f.match(alert.id);
    await f.match(alert.id);
    await f.fanOut();
    await f.project();
    // The match copies of a claim are read in one statement: it fails whenever it names the poison match.
    const deps: DelivererDeps = {
      ...f.delivererDeps,
      db: statementsNaming(poison.matchId, () => true, 'delivery_match_copies'),
    };
    const rows = await deliveryRows(f.db, alert.id);
    expect(await f.attemptDue('test', deps)).toBe(2); // one claim: both crash
    for (const r of rows) expect(await queueRow(r.id)).toMatchObject({ crashes: 1 });

    f.clock.advance(30_000);
    expect(await f.attemptDue('test', deps)).toBe(2);
    await f.project();
    const after = await deliveryRows(f.db, alert.id);
    const { rows: poisoned } = await f.db.query<{ delivery_id: string }>(
      'select delivery_id from delivery_matches where match_id = $1',
      [poison.matchId],
    );
    const poisonId = poisoned[0]!.delivery_id;
    expect(after.map((r) => [r.id === poisonId, r.status]).sort()).toEqual([
      [false, 'SENT'],
      [true, 'PENDING'],
    ]);
    expect(await queueRow(poisonId)).toMatchObject({ crashes: 2 });
    await f.db.query('delete from delivery_queue where delivery_id = $1', [poisonId]);
    await f.updateAlert(alert.id, { is_active: false });
  });

  it('counts crashes across worker instances and processes, and ends each delivery exactly once', async () => {
    // '5s,1m': 3 attempts over 65 s; crashes wait 30 s, then 60 s (the longest delay): 3 in a row end it.
    const schedule = parseRetrySchedule('5s,1m');
    expect(crashLimit(schedule)).toBe(3);
    const { alert } = await webhookTo('/workers');
    for (let i = 0; i < 6; i++) await f.match(alert.id);
    await f.fanOut();
    await f.project();
    const ids = (await deliveryRows(f.db, alert.id)).map((r) => r.id);
    expect(ids).toHaveLength(6);
    const deps: DelivererDeps = { ...f.delivererDeps, schedule, store: alertReadsFail(alert.id) };
    const crashCounts = async () =>
      (
        await f.db.query<{ crashes: number }>(
          'select crashes from delivery_queue where delivery_id = any($1::text[]) order by 1',
          [ids],
        )
      ).rows.map((r) => r.crashes);
    const until = (what: string, done: () => Promise<boolean>) =>
      eventually(async () => ((await done()) ? true : undefined), 15_000, what);

    const start = (owner: string) => {
      const controller = new AbortController();
      const running = runDeliveryWorker(deps, controller.signal, { pollMs: 20, owner });
      return async () => {
        controller.abort();
        await running;
      };
    };
    const stopFirst = start('first');
    await until('a first crash each', async () => (await crashCounts()).every((n) => n === 1));
    await stopFirst();

    // Two new workers at once, as after a restart with a second process.
    const stops = [start('second'), start('third')];
    try {
      f.clock.advance(30_000);
      await until('a second crash each', async () => (await crashCounts()).every((n) => n === 2));
      f.clock.advance(60_000);
      await until('the ends', async () => (await crashCounts()).length === 0);
    } finally {
      await Promise.all(stops.map((stop) => stop()));
    }
    for (const id of ids) {
      const events = await f.store.readStream(deliveryStream(id));
      expect(events.map((e) => [e.type, (e.data as { reason?: string }).reason])).toEqual([
        ['DeliveryCreated', undefined],
        ['DeliveryAbandoned', 'attempt_crashed: gave up after the attempt crashed 3 times in a row'],
      ]);
    }
    expect(f.receiver.requests.filter((r) => r.path === '/workers')).toEqual([]);
    await f.updateAlert(alert.id, { is_active: false });
  });
});
