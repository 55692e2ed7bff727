import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFanout } from '../../../consumers/delivery-fanout/fanout.ts';
import { runDigestScheduler, scheduleDueDigests } from '../../../consumers/digests/digests.ts';
import { deliveryStream } from '../../../src/delivery/delivery.ts';
import { runDeliveryWorker } from '../../../src/delivery/queue/worker.ts';
import { type DeliveryFixture, deliveryFixture } from '../../delivery/support.ts';

interface DigestRow {
  id: string;
  status: string;
  match_count: number;
  window_start: Date;
  window_end: Date;
  error_message: string | null;
}

async function digests(f: DeliveryFixture, alertId: string) {
  const { rows } = await f.db.query<DigestRow>(
    `select id, status, match_count, window_start, window_end, error_message from deliveries
      where alert_id = $1 and type = 'alert.digest' order by window_start, id`,
    [alertId],
  );
  return rows;
}

async function digestMatchIds(f: DeliveryFixture, deliveryId: string) {
  const { rows } = await f.db.query<{ match_id: string }>(
    'select match_id from delivery_matches where delivery_id = $1 order by ordinal',
    [deliveryId],
  );
  return rows.map((r) => r.match_id);
}

describe('digests', () => {
  let f: DeliveryFixture;
  beforeAll(async () => {
    f = await deliveryFixture({ env: { EARSHOT_RETRY_SCHEDULE: '5s,1m,1h' } });
  });
  afterAll(async () => {
    await f?.close();
  });
  const schedule = () => scheduleDueDigests({ ...f.fanoutDeps, graceMs: 30_000 });

  it('sends a DAILY digest at 00:00 UTC of the previous UTC day, once, whatever the reruns', async () => {
    f.clock.set('2026-11-20T10:00:00Z');
    const alert = await f.createAlert({
      title: 'Daily Jensen',
      delivery_cadence: 'DAILY',
      notifications: [
        { type: 'WEBHOOK', webhook_connection_id: f.webhook.id },
        { type: 'EMAIL', email: 'ops@example.com' },
      ],
    });
    const first = await f.match(alert.id);
    f.clock.set('2026-11-20T23:59:59Z');
    const second = await f.match(alert.id);
    f.clock.set('2026-11-21T00:00:01Z');
    const next = await f.match(alert.id);
    await f.fanOut();
    expect(await f.attemptDue()).toBe(0); // nothing realtime

    f.clock.set('2026-11-21T00:00:20Z'); // inside the grace period
    await schedule();
    expect(await digests(f, alert.id)).toEqual([]);

    f.clock.set('2026-11-21T00:00:31Z');
    await Promise.all([schedule(), schedule(), schedule()]);
    await schedule();
    await f.deliverAll();
    const rows = await digests(f, alert.id);
    expect(
      rows.map((r) => [r.status, r.match_count, r.window_start.toISOString(), r.window_end.toISOString()]),
    ).toEqual([
      ['SENT', 2, '2026-11-20T00:00:00.000Z', '2026-11-21T00:00:00.000Z'],
      ['SENT', 2, '2026-11-20T00:00:00.000Z', '2026-11-21T00:00:00.000Z'],
    ]);
    for (const row of rows) expect(await digestMatchIds(f, row.id)).toEqual([first.matchId, second.matchId]);
    const posted = f.receiver.requests.filter((r) => rows.some((row) => row.id === r.headers['webhook-id']));
    expect(posted).toHaveLength(1);
    const body = JSON.parse(posted[0]!.body.toString());
    expect(body).toMatchObject({ type: 'alert.digest', match_count: 2 });
    expect(body.matches.map((m: { id: string }) => m.id)).toEqual([first.matchId, second.matchId]);

    f.clock.set('2026-11-22T00:01:00Z');
    await schedule();
    await f.deliverAll();
    const after = await digests(f, alert.id);
    expect(after).toHaveLength(4);
    expect(await digestMatchIds(f, after[2]!.id)).toEqual([next.matchId]);
  });

  it('sends a WEEKLY digest on Monday 00:00 UTC for the previous Monday–Sunday', async () => {
    f.clock.set('2026-11-23T08:00:00Z'); // a Monday
    const alert = await f.createAlert({
      title: 'Weekly Jensen',
      delivery_cadence: 'WEEKLY',
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: f.webhook.id }],
    });
    const monday = await f.match(alert.id);
    f.clock.set('2026-11-29T23:00:00Z'); // Sunday
    const sunday = await f.match(alert.id);
    await f.fanOut();
    f.clock.set('2026-11-29T23:59:00Z');
    await schedule();
    expect(await digests(f, alert.id)).toEqual([]);
    f.clock.set('2026-11-30T00:01:00Z');
    await schedule();
    await f.deliverAll();
    const rows = await digests(f, alert.id);
    expect(rows.map((r) => [r.status, r.window_start.toISOString(), r.window_end.toISOString()])).toEqual([
      ['SENT', '2026-11-23T00:00:00.000Z', '2026-11-30T00:00:00.000Z'],
    ]);
    expect(await digestMatchIds(f, rows[0]!.id)).toEqual([monday.matchId, sunday.matchId]);
  });

  it("selects a FAILED digest's matches again in the next digest, and only while inside its window", async () => {
    f.clock.set('2026-12-01T09:00:00Z');
    const alert = await f.createAlert({
      title: 'Flaky daily',
      delivery_cadence: 'DAILY',
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: f.webhook.id }],
    });
    const early = await f.match(alert.id);
    await f.fanOut();
    f.receiver.respondWith({ status: 503 }, { status: 503 });
    f.clock.set('2026-12-02T00:01:00Z');
    await schedule();
    await f.deliverAll(); // attempt 1 fails
    f.clock.advance(5_000);
    await f.deliverAll(); // attempt 2 fails; retrying in 1 min
    let rows = await digests(f, alert.id);
    expect(rows.map((r) => r.status)).toEqual(['FAILED']);

    f.clock.set('2026-12-02T12:00:00Z');
    const later = await f.match(alert.id);
    await f.fanOut();
    f.clock.set('2026-12-03T00:01:00Z');
    await schedule();
    await f.deliverAll();
    rows = await digests(f, alert.id);
    expect(rows.map((r) => [r.status, r.match_count])).toEqual([
      ['FAILED', 1],
      ['SENT', 2],
    ]);
    expect(rows[0]!.error_message).toContain(`selected again by digest ${rows[1]!.id}`);
    expect(await digestMatchIds(f, rows[1]!.id)).toEqual([early.matchId, later.matchId]);
    const events = await f.store.readStream(deliveryStream(rows[0]!.id));
    expect(events.map((e) => e.type)).toEqual([
      'DeliveryCreated',
      'DeliveryAttemptFailed',
      'DeliveryAttemptFailed',
      'DeliveryFailed',
    ]);

    // The first digest's retries stop: nothing more is attempted for it.
    f.clock.advance(10 * 3_600_000);
    await f.deliverAll();
    expect((await digests(f, alert.id))[0]!.status).toBe('FAILED');
  });

  it('runs a week of daily digests in a second with the workers running and the clock moved', async () => {
    f.clock.set('2026-12-07T00:10:00Z'); // Monday
    const alert = await f.createAlert({
      title: 'A week of Jensen',
      delivery_cadence: 'DAILY',
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: f.webhook.id }],
    });
    const controller = new AbortController();
    const workers = [
      runFanout(f.fanoutDeps, controller.signal),
      runDeliveryWorker(f.delivererDeps, controller.signal, { pollMs: 20 }),
      runDigestScheduler({ ...f.fanoutDeps, graceMs: 1_000 }, controller.signal, { tickMs: 20 }),
    ];
    try {
      const started = Date.now();
      for (let day = 0; day < 7; day++) {
        f.clock.set(new Date(Date.parse('2026-12-07T12:00:00Z') + day * 86_400_000));
        await f.match(alert.id);
        await f.match(alert.id);
      }
      f.clock.set('2026-12-14T00:00:05Z');
      for (;;) {
        await f.project();
        const rows = await digests(f, alert.id);
        if (rows.length === 7 && rows.every((r) => r.status === 'SENT')) break;
        if (Date.now() - started > 10_000) throw new Error(`digests: ${JSON.stringify(rows)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const rows = await digests(f, alert.id);
      expect(rows.map((r) => r.match_count)).toEqual([2, 2, 2, 2, 2, 2, 2]);
      expect(rows.map((r) => r.window_start.toISOString().slice(0, 10))).toEqual([
        '2026-12-07',
        '2026-12-08',
        '2026-12-09',
        '2026-12-10',
        '2026-12-11',
        '2026-12-12',
        '2026-12-13',
      ]);
    } finally {
      controller.abort();
      await Promise.all(workers);
    }
  });

  it('ends a webhook digest whose body would pass the body limit FAILED at its first attempt, POSTing nothing', async () => {
    f.clock.set('2026-12-20T10:00:00Z');
    const alert = await f.createAlert({
      title: 'Huge digest',
      delivery_cadence: 'DAILY',
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: f.webhook.id }],
    });
    for (let i = 0; i < 10; i++) await f.match(alert.id);
    await f.fanOut();
    f.clock.set('2026-12-21T00:00:31Z');
    await schedule();
    const posted = f.receiver.requests.length;
    // The limit scaled down with the matches (32 MiB in service: 45 matches at the windows' bound).
    f.delivererDeps.channels.webhookBodyLimit = 10_000;
    try {
      await f.deliverAll();
    } finally {
      delete f.delivererDeps.channels.webhookBodyLimit;
    }
    const [row] = await digests(f, alert.id);
    expect(row).toMatchObject({ status: 'FAILED', match_count: 10 });
    expect(row!.error_message).toMatch(
      /^permanent failure: the webhook body would be over 10000 bytes \(passed at match \d of 10\), so nothing was sent; the matches are served by GET \/v1\/alerts\/deliveries\/\w+\?view=detailed$/,
    );
    expect(f.receiver.requests.length).toBe(posted);
  });

  it("selects the matches that pass the alert's filters as they are when the window closes", async () => {
    f.clock.set('2026-12-27T10:00:00Z');
    const alert = await f.createAlert({
      title: 'Filtered digest',
      delivery_cadence: 'DAILY',
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: f.webhook.id }],
    });
    await f.match(alert.id, { language: 'en-US' });
    const german = await f.match(alert.id, { language: 'de' });
    const incidental = await f.match(alert.id, { language: 'de-AT', relevance: 'incidental' });
    await f.fanOut();
    await f.updateAlert(alert.id, { filters: { languages: ['de'] } });
    f.clock.set('2026-12-28T00:00:31Z');
    await schedule();
    await f.project();
    const [row] = await digests(f, alert.id);
    expect((await digestMatchIds(f, row!.id)).sort()).toEqual([german.matchId, incidental.matchId].sort());
  });
});
