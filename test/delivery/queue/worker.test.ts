import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretBox } from '../../../src/crypto/secret-box.ts';
import type { Db } from '../../../src/db/db.ts';
import { deliveryStream } from '../../../src/delivery/delivery.ts';
import { loadMatches } from '../../../src/delivery/matched.ts';
import {
  type DelivererDeps,
  type DelivererOptions,
  runDeliveryWorker,
} from '../../../src/delivery/queue/worker.ts';
import { checkWebhookUrl, parseAllowCidrs } from '../../../src/webhooks/address-rule.ts';
import { createWebhookConnection, revokeWebhookConnection } from '../../../src/webhooks/connections.ts';
import { sha256Hex } from '../../../src/webhooks/payload.ts';
import { createWebhookPools } from '../../../src/webhooks/pools.ts';
import { eventually } from '../../e2e/harness.ts';
import { startHttpsReceiver } from '../../support/https-receiver.ts';
import { createTenant } from '../../support/platform.ts';
import { parseMail } from '../../support/smtp.ts';
import { type DeliveryFixture, deliveryFixture, deliveryRows, ENTITY_ID, RECIPIENTS } from '../support.ts';

describe('realtime deliveries', () => {
  let f: DeliveryFixture;
  beforeAll(async () => {
    f = await deliveryFixture({ env: { EARSHOT_RETRY_SCHEDULE: '5s,1m,1h' } });
  });
  afterAll(async () => {
    await f?.close();
  });

  it('sends one match by email to each recipient, to the chat channel and as a signed webhook', async () => {
    const alert = await f.createAlert();
    const match = await f.match(alert.id);
    await f.deliverAll();

    const rows = await deliveryRows(f.db, alert.id);
    expect(rows.map((r) => [r.channel, r.status, r.match_count])).toEqual([
      ['CHAT', 'SENT', 1],
      ['EMAIL', 'SENT', 1],
      ['WEBHOOK', 'SENT', 1],
    ]);

    // Email: one message per recipient, subject with the title, landing and disable links, RFC 8058 headers.
    const mails = f.smtp.messages.filter((m) => m.raw.includes(rows[1]!.id));
    expect(mails.flatMap((m) => m.to).sort()).toEqual([...RECIPIENTS].sort());
    const mail = parseMail(mails[0]!.raw);
    expect(mail.header('subject')).toContain('Jensen on podcasts');
    expect(mail.header('list-unsubscribe')).toMatch(
      /^<https:\/\/earshot\.test\/v1\/alerts\/disable\?token=[\w-]{43}>$/,
    );
    expect(mail.header('list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
    expect(mail.parts.get('text/plain')).toContain(`https://earshot.test/alerts/deliveries/${rows[1]!.id}`);
    expect(mail.parts.get('text/html')).toContain('Our guest today is Jensen Huang.');

    // Chat: one message with blocks.
    expect(f.slack.posted).toHaveLength(1);
    expect(f.slack.posted[0]!.channel).toBe('C0GENERAL');
    expect(JSON.stringify(f.slack.posted[0]!.blocks)).toContain('Jensen on podcasts');

    // Webhook: signed Standard Webhooks POST whose body names the match; its sha256 is recorded.
    expect(f.receiver.requests).toHaveLength(1);
    const request = f.receiver.requests[0]!;
    const headers = request.headers as Record<string, string>;
    expect(headers['webhook-id']).toBe(rows[2]!.id);
    expect(headers['x-webhook-signature']).toBe(headers['webhook-signature']);
    const secret = (await import('../../../src/webhooks/connections.ts')).webhookDestination;
    const destination = await secret({ db: f.db, box: f.box }, f.webhook.id);
    const verified = new Webhook(destination!.secret).verify(request.body.toString('utf8'), headers) as {
      type: string;
      delivery_id: string;
      match_count: number;
      matches: Array<{ id: string; windows: unknown[]; episode: { title: string } }>;
      alert: { id: string; title: string };
    };
    expect(verified.type).toBe('alert.match');
    expect(verified.delivery_id).toBe(rows[2]!.id);
    expect(verified.alert).toMatchObject({ id: alert.id, title: 'Jensen on podcasts' });
    expect(verified.match_count).toBe(1);
    expect(verified.matches[0]!.id).toBe(match.matchId);
    expect(verified.matches[0]!.windows).toHaveLength(1);
    const events = await f.store.readStream(deliveryStream(rows[2]!.id));
    expect(events.map((e) => e.type)).toEqual(['DeliveryCreated', 'DeliverySent']);
    expect((events[1]!.data as { payloadSha256: string }).payloadSha256).toBe(
      sha256Hex(request.body.toString('utf8')),
    );
  });

  it('creates nothing twice when the same AlertMatched is fanned out again', async () => {
    const before = await deliveryRows(f.db);
    await f.db.query("update projection_checkpoints set position = '0/0' where name = 'delivery-fanout'");
    await f.deliverAll();
    expect(await deliveryRows(f.db)).toEqual(before);
    expect(f.receiver.requests).toHaveLength(1);
  });

  it('never notifies for a backfilled match', async () => {
    const alert = await f.createAlert({ title: 'Backfill only' });
    await f.match(alert.id, { isBackfilled: true });
    await f.deliverAll();
    expect(await deliveryRows(f.db, alert.id)).toEqual([]);
  });

  it('keeps SENT with the failure noted when one email recipient fails and the other succeeds', async () => {
    const alert = await f.createAlert({
      notifications: RECIPIENTS.map((email) => ({ type: 'EMAIL', email })),
    });
    f.smtp.rejectRecipient('ceo@example.com', 550, 'No such user here');
    try {
      await f.match(alert.id);
      await f.deliverAll();
    } finally {
      f.smtp.rejectRecipient('ceo@example.com', 250, 'ok');
    }
    const [row] = await deliveryRows(f.db, alert.id);
    expect(row).toMatchObject({ channel: 'EMAIL', status: 'SENT' });
    expect(row!.error_message).toMatch(/1 of 2 recipients failed: ceo@example.com: SMTP 550/);
  });

  it('retries a failing webhook on the schedule, honouring Retry-After, until it succeeds', async () => {
    const alert = await f.createAlert({
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: f.webhook.id }],
    });
    f.receiver.respondWith({ status: 503, body: 'down' }, { status: 429, headers: { 'retry-after': '120' } });
    const sent = f.receiver.requests.length;
    await f.match(alert.id);
    await f.deliverAll();
    let [row] = await deliveryRows(f.db, alert.id);
    expect(row).toMatchObject({ status: 'FAILED', attempts: 1, error_message: 'HTTP 503: down' });

    f.clock.advance(4_000); // jitter 0.5 → exactly 5 s: not due yet
    await f.deliverAll();
    expect(f.receiver.requests.length - sent).toBe(1);
    f.clock.advance(1_000);
    await f.deliverAll();
    [row] = await deliveryRows(f.db, alert.id);
    expect(row).toMatchObject({ status: 'FAILED', attempts: 2 });
    const { rows: next } = await f.db.query<{ next_attempt_at: Date }>(
      'select next_attempt_at from deliveries where id = $1',
      [row!.id],
    );
    // Retry-After 120 s is later than the scheduled 1 m, so it wins (capped at the longest delay, 1 h).
    expect(next[0]!.next_attempt_at.getTime() - f.clock.now().getTime()).toBe(120_000);

    f.clock.advance(120_000);
    await f.deliverAll();
    [row] = await deliveryRows(f.db, alert.id);
    expect(row).toMatchObject({ status: 'SENT', attempts: 3 });
    const ids = f.receiver.requests.slice(sent).map((r) => r.headers['webhook-id']);
    expect(new Set(ids)).toEqual(new Set([row!.id]));
    const { rows: attempts } = await f.db.query<{ outcome: string; status_code: number }>(
      'select outcome, status_code from delivery_attempts where delivery_id = $1 order by attempt',
      [row!.id],
    );
    expect(attempts).toEqual([
      { outcome: 'failed', status_code: 503 },
      { outcome: 'failed', status_code: 429 },
      { outcome: 'sent', status_code: 200 },
    ]);
  });

  it('keeps the whole retry schedule when the receiver asks to retry sooner (Retry-After 1 s or a past date)', async () => {
    for (const retryAfter of ['1', 'Thu, 01 Jan 2026 00:00:00 GMT']) {
      const alert = await f.createAlert({
        notifications: [{ type: 'WEBHOOK', webhook_connection_id: f.webhook.id }],
      });
      f.receiver.respondWith(
        ...Array.from({ length: 3 }, () => ({ status: 500, headers: { 'retry-after': retryAfter } })),
      );
      const sent = f.receiver.requests.length;
      await f.match(alert.id);
      await f.deliverAll();
      const [row] = await deliveryRows(f.db, alert.id);
      const dueIn = async () => {
        const { rows } = await f.db.query<{ next_attempt_at: Date }>(
          'select next_attempt_at from deliveries where id = $1',
          [row!.id],
        );
        return rows[0]!.next_attempt_at.getTime() - f.clock.now().getTime();
      };
      expect(await dueIn()).toBe(5_000); // the schedule's first delay (jitter 0.5), not 1 s
      f.clock.advance(5_000);
      await f.deliverAll();
      expect(await dueIn()).toBe(60_000);
      for (let i = 0; i < 8; i++) {
        f.clock.advance(5_000); // 40 s in all: before the second delay of 1 m
        await f.deliverAll();
      }
      const [later] = await deliveryRows(f.db, alert.id);
      expect(later).toMatchObject({ status: 'FAILED', attempts: 2 });
      expect(f.receiver.requests.length - sent).toBe(2);
      f.clock.advance(20_000);
      await f.deliverAll();
      expect(await dueIn()).toBe(3_600_000);
      f.clock.advance(3_600_000);
      await f.deliverAll();
      expect((await deliveryRows(f.db, alert.id))[0]).toMatchObject({ status: 'SENT', attempts: 4 });
      await f.updateAlert(alert.id, { is_active: false }); // stays within the plan's active alerts
    }
  });

  it('abandons a realtime webhook after the last retry', async () => {
    const alert = await f.createAlert({
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: f.webhook.id }],
    });
    f.receiver.respondWith(...Array.from({ length: 4 }, () => ({ status: 500 })));
    await f.match(alert.id);
    await f.deliverAll();
    for (const step of [5_000, 60_000, 3_600_000]) {
      f.clock.advance(step);
      await f.deliverAll();
    }
    const [row] = await deliveryRows(f.db, alert.id);
    expect(row).toMatchObject({ status: 'ABANDONED', attempts: 4 });
    expect(row!.error_message).toMatch(/^gave up after 4 attempts: HTTP 500/);
    f.clock.advance(100 * 3_600_000);
    expect(await f.deliverAll()).toBe(0);
  });

  it('fails a webhook at once, with the reason, when its secret was sealed under another key', async () => {
    const webhook = await createWebhookConnection(
      {
        db: f.db,
        box: createSecretBox(randomBytes(32)),
        now: f.clock.now,
        checkUrl: (url) => checkWebhookUrl(url, { allow: parseAllowCidrs(['127.0.0.0/8']) }),
      },
      { projectId: f.tenant.project.id, url: f.receiver.url('/other-key') },
    );
    const alert = await f.createAlert({
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: webhook.id }],
    });
    const before = f.receiver.requests.length;
    await f.match(alert.id);
    await f.deliverAll();
    const [row] = await deliveryRows(f.db, alert.id);
    expect(row).toMatchObject({ status: 'ABANDONED', attempts: 1 });
    expect(row!.error_message).toMatch(/cannot be opened with the configured EARSHOT_SECRET_KEY/);
    expect(f.receiver.requests.length).toBe(before);
  });

  it('ends a realtime email FAILED, not ABANDONED, after the last retry', async () => {
    const alert = await f.createAlert({ notifications: [{ type: 'EMAIL', email: 'ops@example.com' }] });
    f.smtp.rejectRecipient('ops@example.com', 451, 'Try again later');
    try {
      await f.match(alert.id);
      await f.deliverAll();
      for (const step of [5_000, 60_000, 3_600_000]) {
        f.clock.advance(step);
        await f.deliverAll();
      }
    } finally {
      f.smtp.rejectRecipient('ops@example.com', 250, 'ok');
    }
    const [row] = await deliveryRows(f.db, alert.id);
    expect(row).toMatchObject({ status: 'FAILED', attempts: 4 });
    const { rows } = await f.db.query<{ is_final: boolean }>(
      'select is_final from deliveries where id = $1',
      [row!.id],
    );
    expect(rows[0]!.is_final).toBe(true);
  });

  it('does not follow a redirect: the 3xx is a failed attempt and the webhook is abandoned', async () => {
    const alert = await f.createAlert({
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: f.webhook.id }],
    });
    f.receiver.respondWith({ status: 307, headers: { location: f.receiver.url('/elsewhere') } });
    const before = f.receiver.requests.length;
    await f.match(alert.id);
    await f.deliverAll();
    const [row] = await deliveryRows(f.db, alert.id);
    expect(row).toMatchObject({ status: 'ABANDONED', attempts: 1 });
    expect(row!.error_message).toContain('redirect');
    expect(f.receiver.requests.slice(before).map((r) => r.path)).toEqual(['/hook']);
  });

  it('skips a delivery whose alert was paused before the send', async () => {
    const alert = await f.createAlert({
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: f.webhook.id }],
    });
    await f.match(alert.id);
    await f.fanOut();
    await f.updateAlert(alert.id, { is_active: false });
    const before = f.receiver.requests.length;
    await f.deliverAll();
    const [row] = await deliveryRows(f.db, alert.id);
    expect(row).toMatchObject({ status: 'SKIPPED', error_message: 'the alert was paused before the send' });
    expect(f.receiver.requests.length).toBe(before);
  });

  it("skips a realtime match that no longer passes the alert's filters", async () => {
    const alert = await f.createAlert({
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: f.webhook.id }],
    });
    await f.match(alert.id, { language: 'de' });
    await f.fanOut();
    await f.updateAlert(alert.id, { filters: { languages: ['en'] } });
    await f.deliverAll();
    const [row] = await deliveryRows(f.db, alert.id);
    expect(row).toMatchObject({
      status: 'SKIPPED',
      error_message: "the match no longer passes the alert's filters",
    });
  });

  it('reads whole matches for webhook bodies and only the mention lines for email and chat', async () => {
    const alert = await f.createAlert();
    const match = await f.match(alert.id);
    await f.deliverAll();
    const loaded = await loadMatches(f.delivererDeps, { whole: [], mentions: [match.matchId] });
    const mentions = match.windows.flatMap((w) => w.lines.filter((line) => line.is_mention));
    expect(loaded.get(match.matchId)).toEqual({ ...match, windows: [{ lines: mentions }] });
    const both = await loadMatches(f.delivererDeps, { whole: [match.matchId], mentions: [match.matchId] });
    expect(both.get(match.matchId)).toEqual(match);
    // The email quoted the mention lines; the webhook body carried the whole windows.
    const body = JSON.parse(f.receiver.requests.at(-1)!.body.toString());
    expect(body.matches[0].windows[0].lines.map((l: { text: string }) => l.text)).toContain(
      'Thanks for having me.',
    );
    const mail = f.smtp.messages.at(-1)!.raw;
    expect(parseMail(mail).parts.get('text/plain')).toContain('Our guest today is Jensen Huang.');
  });
});

describe('the queue worker', () => {
  let f: DeliveryFixture;
  beforeAll(async () => {
    f = await deliveryFixture();
  });
  afterAll(async () => {
    await f?.close();
  });

  /** Runs the worker with keep-alive pools until `done` holds, then stops it. */
  async function runWorker(db: Db, done: () => Promise<boolean>, options: DelivererOptions = {}) {
    const pools = createWebhookPools({ connectionsPerPool: options.concurrency ?? 64 });
    const deps: DelivererDeps = {
      ...f.delivererDeps,
      db,
      channels: { ...f.delivererDeps.channels, webhook: { ...f.delivererDeps.channels.webhook, pools } },
    };
    const controller = new AbortController();
    const running = runDeliveryWorker(deps, controller.signal, { pollMs: 50, ...options });
    try {
      await eventually(async () => ((await done()) ? true : undefined), 30_000, 'the deliveries');
    } finally {
      controller.abort();
      await running;
      await pools.close();
    }
  }

  const queued = async () =>
    (await f.db.query<{ n: number }>('select count(*)::int as n from delivery_queue')).rows[0]!.n;

  it('claims many deliveries per round trip and sends a burst over a few reused connections, closed when it stops', async () => {
    const alert = await f.createAlert({
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: f.webhook.id }],
    });
    for (let i = 0; i < 60; i++) await f.match(alert.id);
    await f.fanOut();
    let claims = 0;
    const counting: Db = {
      ...f.db,
      query: (text, params) => {
        if (text.includes('for update skip locked')) claims++;
        return f.db.query(text, params);
      },
    };
    const connections = f.receiver.connections;
    await runWorker(counting, async () => (await queued()) === 0, { concurrency: 8 });

    await f.project();
    const rows = await deliveryRows(f.db, alert.id);
    expect(rows.filter((r) => r.status === 'SENT')).toHaveLength(60);
    expect(new Set(f.receiver.requests.map((r) => r.headers['webhook-id'])).size).toBe(60);
    expect(f.receiver.connections - connections).toBeLessThanOrEqual(8);
    expect(claims).toBeLessThan(30); // one claim per completion would be about 60
    await eventually(
      async () => (f.receiver.openConnections === 0 ? true : undefined),
      5_000,
      'closed sockets',
    );
  });

  it('reads the alert and the connection again for every claim: a revocation between two claims is honoured', async () => {
    const webhook = await createWebhookConnection(
      {
        db: f.db,
        box: f.box,
        now: f.clock.now,
        checkUrl: (url) => checkWebhookUrl(url, { allow: parseAllowCidrs(['127.0.0.0/8']) }),
      },
      { projectId: f.tenant.project.id, url: f.receiver.url('/revoked-later') },
    );
    const alert = await f.createAlert({
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: webhook.id }],
    });
    const pools = createWebhookPools();
    const deps: DelivererDeps = {
      ...f.delivererDeps,
      channels: { ...f.delivererDeps.channels, webhook: { ...f.delivererDeps.channels.webhook, pools } },
    };
    const controller = new AbortController();
    const running = runDeliveryWorker(deps, controller.signal, { pollMs: 50 });
    try {
      await f.match(alert.id);
      await f.fanOut();
      await eventually(async () => ((await queued()) === 0 ? true : undefined), 15_000, 'the first delivery');
      await revokeWebhookConnection({ db: f.db, now: f.clock.now }, f.tenant.project.id, webhook.id);
      f.clock.advance(1_000); // the second delivery is created later (rows are listed by creation)
      await f.match(alert.id);
      await f.fanOut();
      await eventually(
        async () => ((await queued()) === 0 ? true : undefined),
        15_000,
        'the second delivery',
      );
    } finally {
      controller.abort();
      await running;
      await pools.close();
    }
    await f.project();
    const rows = await deliveryRows(f.db, alert.id);
    expect(rows.map((r) => [r.status, r.error_message])).toEqual([
      ['SENT', null],
      ['SKIPPED', `webhook connection ${webhook.id} was revoked`],
    ]);
    expect(f.receiver.requests.filter((r) => r.path === '/revoked-later')).toHaveLength(1);
  });

  it("sends another organization's delivery in the first claim, not behind one organization's backlog to a slow receiver", async () => {
    const slow = await f.createAlert({
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: f.webhook.id }],
    });
    f.receiver.respondWith(...Array.from({ length: 40 }, () => ({ delayMs: 500 })));
    for (let i = 0; i < 40; i++) await f.match(slow.id);
    const other = await createTenant(f.db, 'TEAM');
    const receiver = await startHttpsReceiver(f.tls);
    try {
      const webhook = await createWebhookConnection(
        {
          db: f.db,
          box: f.box,
          now: f.clock.now,
          checkUrl: (url) => checkWebhookUrl(url, { allow: parseAllowCidrs(['127.0.0.0/8']) }),
        },
        { projectId: other.project.id, url: receiver.url() },
      );
      const caller = { projectId: other.project.id, organizationId: other.organization.id };
      const alert = (await f.alerts.create(caller, {
        title: 'Another organization',
        entities: [{ entity_type: 'PERSON', entity_id: ENTITY_ID }],
        notifications: [{ type: 'WEBHOOK', webhook_connection_id: webhook.id }],
      })) as { id: string };
      f.clock.advance(1_000); // queued after the whole backlog
      await f.match(alert.id, caller);
      await f.fanOut();
      const backlog = f.receiver.requests.length;
      await runWorker(f.db, async () => (await queued()) === 0, { concurrency: 8 });

      expect(receiver.requests).toHaveLength(1);
      const arrived = receiver.requests[0]!.receivedAt;
      // Oldest first, it waited for all 40 (5 rounds of 500 ms); taking turns, it is in the first claim.
      const before = f.receiver.requests.slice(backlog).filter((r) => r.receivedAt < arrived);
      expect(before.length).toBeLessThan(8);
    } finally {
      await receiver.close();
    }
  });
});
