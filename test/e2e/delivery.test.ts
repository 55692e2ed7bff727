import { createHash } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addChatConnection } from '../../src/chat/connections.ts';
import { createSecretBox } from '../../src/crypto/secret-box.ts';
import { deliveryStream } from '../../src/delivery/delivery.ts';
import { episodeStream } from '../../src/ingestion/events.ts';
import { matchStream } from '../../src/matching/streams.ts';
import { verifyEmail } from '../../src/platform/organizations.ts';
import { entityEvent, episodeEvent } from '../fixtures/events.ts';
import { type HttpsReceiver, startHttpsReceiver } from '../support/https-receiver.ts';
import { type SlackStandin, startSlackStandin } from '../support/slack-standin.ts';
import { parseMail, type SmtpCapture, startSmtpServer } from '../support/smtp.ts';
import { testTls } from '../support/tls.ts';
import { type Earshot, eventually, startEarshot } from './harness.ts';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('delivery end to end: ingest an episode, receive it on every channel', () => {
  const tls = testTls();
  let earshot: Earshot;
  let receiver: HttpsReceiver;
  let smtp: SmtpCapture;
  let slack: SlackStandin;

  beforeAll(async () => {
    [receiver, smtp, slack] = await Promise.all([
      startHttpsReceiver(tls),
      startSmtpServer(),
      startSlackStandin(),
    ]);
    earshot = await startEarshot({
      env: { SMTP_URL: smtp.url, SLACK_API_URL: slack.url, EARSHOT_RETRY_SCHEDULE: '300ms,300ms,300ms' },
      delivery: { webhook: { ca: tls.ca, timeoutMs: 5_000 }, worker: { pollMs: 50 } },
    });
  });
  afterAll(async () => {
    await earshot?.stop();
    await Promise.all([receiver?.close(), smtp?.close(), slack?.close()]);
  });

  /** An entity, a webhook connection to `to`, and an alert on that entity with the given extra channels. */
  async function watch(name: string, to: HttpsReceiver, extra: unknown[] = []) {
    const entityId = `ent-${name.toLowerCase().replace(/\W+/g, '-')}`;
    await earshot.ingest([entityEvent({ id: entityId, name })]);
    await eventually(
      async () => ((await earshot.api('GET', `/v1/entities/${entityId}`)).status === 200 ? true : undefined),
      10_000,
      'the entity',
    );
    const connection = await earshot.api(
      'POST',
      `/v1/projects/${earshot.tenant.project.id}/webhooks/connections`,
      {
        url: to.url(`/hook/${entityId}`),
      },
    );
    expect(connection.status).toBe(200);
    const { id: connectionId, secret } = connection.json() as { id: string; secret: string };
    const alert = await earshot.api('POST', `/v1/projects/${earshot.tenant.project.id}/alerts`, {
      title: `${name} on podcasts`,
      entities: [{ entity_type: 'PERSON', entity_id: entityId }],
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: connectionId }, ...extra],
    });
    expect(alert.status).toBe(200);
    const alertId = (alert.json() as { id: string }).id;
    // The matcher watches the alert once its AlertCreated is in the matcher's feed.
    await eventually(async () =>
      (await earshot.api('GET', `/v1/alerts/${alertId}`)).status === 200 ? true : undefined,
    );
    return { entityId, connectionId, secret, alertId };
  }

  const mentioning = (name: string) =>
    episodeEvent({
      lines: ['Welcome back to Chip Talk.', `Our guest today is ${name}.`, 'Thanks for listening.'],
    });

  async function deliveriesOf(
    alertId: string,
    until: (d: Array<{ id: string; channel: string; status: string; attempt_count: number }>) => boolean,
  ) {
    return eventually(
      async () => {
        const page = await earshot.api('GET', `/v1/alerts/${alertId}/deliveries`);
        const data = page.json().data as Array<{
          id: string;
          channel: string;
          status: string;
          attempt_count: number;
          matches: Array<{ id: string }>;
        }>;
        return until(data) ? data : undefined;
      },
      20_000,
      `deliveries of ${alertId}`,
    );
  }

  it('delivers a signed webhook, an email per recipient and a chat message; the delivery, landing page and payload read back', async () => {
    for (const email of ['ops@example.com', 'cfo@example.com'])
      await verifyEmail(earshot.db, earshot.tenant.organization.id, email);
    const chat = await addChatConnection(
      { db: earshot.db, box: createSecretBox(earshot.runtime.secretKey), now: () => new Date() },
      { projectId: earshot.tenant.project.id, teamId: 'T01', teamName: 'Acme', botToken: 'xoxb-test-token' },
    );
    const { alertId, secret } = await watch('Jensen Huang', receiver, [
      { type: 'EMAIL', email: 'ops@example.com' },
      { type: 'EMAIL', email: 'cfo@example.com' },
      { type: 'CHAT', chat_connection_id: chat.id, chat_channel_id: 'C0GENERAL' },
    ]);

    const episode = mentioning('Jensen Huang');
    await earshot.ingest([episode]);

    const posted = await eventually(async () => receiver.requests[0], 20_000, 'the webhook');
    const body = new Webhook(secret).verify(
      posted.body.toString('utf8'),
      posted.headers as Record<string, string>,
    ) as {
      type: string;
      delivery_id: string;
      alert: { id: string };
      matches: Array<{ id: string; episode: { title: string }; windows: unknown[] }>;
    };
    expect(body).toMatchObject({ type: 'alert.match', alert: { id: alertId }, match_count: 1 });
    expect(posted.headers['x-webhook-signature']).toBe(posted.headers['webhook-signature']);
    expect(posted.headers['webhook-id']).toBe(body.delivery_id);

    const mails = await eventually(
      async () => (smtp.messages.length >= 2 ? smtp.messages : undefined),
      20_000,
      'two emails',
    );
    expect(mails.map((m) => m.to[0]).sort()).toEqual(['cfo@example.com', 'ops@example.com']);
    const mail = parseMail(mails[0]!.raw);
    expect(mail.header('subject')).toContain('Jensen Huang on podcasts');
    expect(mail.header('list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
    await eventually(async () => slack.posted[0], 20_000, 'the chat message');

    const deliveries = await deliveriesOf(
      alertId,
      (d) => d.length === 3 && d.every((x) => x.status === 'SENT'),
    );
    const webhookDelivery = deliveries.find((d) => d.channel === 'WEBHOOK')!;
    expect(webhookDelivery.id).toBe(body.delivery_id);

    const one = await earshot.api('GET', `/v1/alerts/deliveries/${webhookDelivery.id}?view=detailed`);
    expect(one.json()).toMatchObject({
      status: 'SENT',
      viewer_can_manage: true,
      has_webhook_payload: true,
      match_count: 1,
    });
    const anonymous = await earshot.api('GET', `/v1/alerts/deliveries/${webhookDelivery.id}`, undefined, {});
    expect(anonymous.json()).toMatchObject({ viewer_can_manage: false, has_webhook_payload: false });

    const payload = await earshot.api('GET', `/v1/alerts/deliveries/${webhookDelivery.id}/webhook-payload`);
    expect(payload.status).toBe(200);
    expect(sha256(payload.bytes)).toBe(sha256(posted.body));

    const landing = await earshot.api('GET', `/alerts/deliveries/${webhookDelivery.id}`, undefined, {});
    expect(landing.status).toBe(200);
    expect(landing.bytes.toString()).toContain('Our guest today is Jensen Huang.');

    // One correlation id from the ingested event to the delivery; each event names its cause.
    const [ingested] = await earshot.store.readStream(episodeStream(episode.episode.id));
    const [matched] = await earshot.store.readStream(matchStream(body.matches[0]!.id));
    const [created] = await earshot.store.readStream(deliveryStream(webhookDelivery.id));
    expect(matched!.metadata).toMatchObject({ correlationId: ingested!.id, causationId: ingested!.id });
    expect(created!.metadata).toMatchObject({ correlationId: ingested!.id, causationId: matched!.id });

    const match = await earshot.api('GET', `/v1/alerts/matches/${body.matches[0]!.id}`);
    expect(match.status).toBe(200);
    expect(
      (match.json() as { deliveries: Array<{ id: string }> }).deliveries.map((d) => d.id).sort(),
    ).toEqual(deliveries.map((d) => d.id).sort());
  });

  it('retries a receiver that fails and then recovers, recording each attempt', async () => {
    const flaky = await startHttpsReceiver(tls);
    try {
      flaky.respondWith({ status: 500, body: 'boom' }, { status: 503 });
      const { alertId } = await watch('Lisa Su', flaky);
      await earshot.ingest([mentioning('Lisa Su')]);
      const [delivery] = await deliveriesOf(alertId, (d) => d[0]?.status === 'SENT');
      const read = (await earshot.api('GET', `/v1/alerts/deliveries/${delivery!.id}`)).json() as {
        attempts: Array<{ outcome: string; status_code: number }>;
      };
      expect(read.attempts.map((a) => [a.outcome, a.status_code])).toEqual([
        ['failed', 500],
        ['failed', 503],
        ['sent', 200],
      ]);
      expect(new Set(flaky.requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([delivery!.id]));
    } finally {
      await flaky.close();
    }
  });

  it('abandons a realtime webhook whose receiver always fails, after the whole schedule', async () => {
    const broken = await startHttpsReceiver(tls);
    try {
      broken.respondWith(...Array.from({ length: 10 }, () => ({ status: 500 })));
      const { alertId } = await watch('Pat Gelsinger', broken);
      await earshot.ingest([mentioning('Pat Gelsinger')]);
      const [delivery] = await deliveriesOf(alertId, (d) => d[0]?.status === 'ABANDONED');
      expect(delivery!.attempt_count).toBe(4);
      expect(broken.requests).toHaveLength(4);
    } finally {
      await broken.close();
    }
  });

  it('does not follow a redirect', async () => {
    const redirecting = await startHttpsReceiver(tls);
    try {
      redirecting.respondWith({ status: 302, headers: { location: redirecting.url('/stolen') } });
      const { alertId } = await watch('Satya Nadella', redirecting);
      await earshot.ingest([mentioning('Satya Nadella')]);
      const [delivery] = await deliveriesOf(alertId, (d) => d[0]?.status === 'ABANDONED');
      expect(delivery!.attempt_count).toBe(1);
      expect(redirecting.requests.map((r) => r.path)).toEqual([`/hook/ent-satya-nadella`]);
    } finally {
      await redirecting.close();
    }
  });
});
