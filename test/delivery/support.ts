import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import {
  catchUpFanout,
  FANOUT,
  type FanoutDeps,
  readCheckpoint,
} from '../../consumers/delivery-fanout/fanout.ts';
import { alertsProjection } from '../../projections/alerts/projection.ts';
import { deliveriesProjection } from '../../projections/deliveries/projection.ts';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { createDisableTokens } from '../../src/alerts/disable-tokens.ts';
import { AlertService, entitiesReadModel } from '../../src/alerts/service.ts';
import { addChatConnection } from '../../src/chat/connections.ts';
import { loadConfig } from '../../src/config.ts';
import { createSecretBox } from '../../src/crypto/secret-box.ts';
import { type DeliveryOptions, deliveryCapability } from '../../src/delivery/capability.ts';
import { createDeliveryIds } from '../../src/delivery/ids.ts';
import { claimDeliveries } from '../../src/delivery/queue/queue.ts';
import { createRecorder } from '../../src/delivery/queue/recorder.ts';
import { parseRetrySchedule } from '../../src/delivery/queue/schedule.ts';
import { type DelivererDeps, startAttempts } from '../../src/delivery/queue/worker.ts';
import { createMailer } from '../../src/email/mailer.ts';
import { comparePositions, START } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { type AlertMatchedEventData, alertMatchedEvent, matchStream } from '../../src/matching/streams.ts';
import { verifyEmail } from '../../src/platform/organizations.ts';
import type { Runtime } from '../../src/runtime.ts';
import { deriveKey } from '../../src/secret-key.ts';
import { checkWebhookUrl, parseAllowCidrs } from '../../src/webhooks/address-rule.ts';
import { createWebhookConnection } from '../../src/webhooks/connections.ts';
import { createTestDb } from '../support/db.ts';
import { startHttpsReceiver } from '../support/https-receiver.ts';
import { createTenant } from '../support/platform.ts';
import { catchUp } from '../support/projections.ts';
import { startSlackStandin } from '../support/slack-standin.ts';
import { startSmtpServer } from '../support/smtp.ts';
import { testTls } from '../support/tls.ts';

export const ENTITY_ID = 'ent-jensen';
export const RECIPIENTS = ['ops@example.com', 'ceo@example.com'];

/** A clock the test moves by hand. */
export function testClock(start = '2026-11-20T10:00:00.000Z') {
  let at = new Date(start).getTime();
  return {
    now: () => new Date(at),
    set: (iso: string | Date) => {
      at = new Date(iso).getTime();
    },
    advance: (ms: number) => {
      at += ms;
    },
  };
}

export type DeliveryFixture = Awaited<ReturnType<typeof deliveryFixture>>;

/**
 * Real PostgreSQL (a schema of its own), the real event store, a real HTTPS receiver, SMTP
 * server and Slack stand-in on 127.0.0.1, an organization with a project and key, an entity,
 * verified recipients, one webhook and one chat connection. Matches are appended the way the
 * matcher appends them; delivery work is driven step by step (`deliverAll`) or by the workers.
 */
export async function deliveryFixture(
  options: { env?: Record<string, string>; delivery?: DeliveryOptions } = {},
) {
  const testDb = await createTestDb({ max: 20 });
  const { db } = testDb;
  const store = createPostgresEventStore(db, { pollIntervalMs: 20 });
  const tls = testTls();
  const receiver = await startHttpsReceiver(tls);
  const smtp = await startSmtpServer();
  const slack = await startSlackStandin();
  const clock = testClock();
  const secretKey = randomBytes(32);
  const config = loadConfig({
    EARSHOT_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
    SMTP_URL: smtp.url,
    SLACK_API_URL: slack.url,
    PUBLIC_BASE_URL: 'https://earshot.test',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'earshot-delivery-')),
    EARSHOT_SECRET_KEY: secretKey.toString('base64'),
    ...options.env,
  });
  const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const runtime: Runtime = { config, db, store, secretKey, log, now: clock.now };
  const tenant = await createTenant(db, 'TEAM');
  const caller = { projectId: tenant.project.id, organizationId: tenant.organization.id };
  const box = createSecretBox(secretKey);
  const tokens = createDisableTokens(secretKey);
  const alerts = new AlertService({ db, store, tokens, entities: entitiesReadModel(db), now: clock.now });
  await db.transaction((tx) =>
    entitiesProjection.apply(tx, [
      {
        id: randomUUID(),
        streamId: `entity-${ENTITY_ID}`,
        revision: 0,
        position: '1/1',
        type: 'EntityUpserted',
        data: {
          type: 'entity.upserted',
          event_id: randomUUID(),
          occurred_at: '2026-11-01T00:00:00Z',
          entity: { id: ENTITY_ID, slug: 'jensen-huang', name: 'Jensen Huang', entity_type: 'PERSON' },
        },
        metadata: {},
        recordedAt: new Date(),
      },
    ]),
  );
  for (const email of RECIPIENTS) await verifyEmail(db, tenant.organization.id, email);
  const allow = parseAllowCidrs(config.webhookAllowCidrs);
  const connectionDeps = {
    db,
    box,
    now: clock.now,
    checkUrl: (url: string) => checkWebhookUrl(url, { allow }),
  };
  const webhook = await createWebhookConnection(connectionDeps, {
    projectId: tenant.project.id,
    url: receiver.url(),
  });
  const chat = await addChatConnection(connectionDeps, {
    projectId: tenant.project.id,
    teamId: 'T01',
    teamName: 'Acme',
    botToken: 'xoxb-test-token',
  });

  const deliveryOptions: DeliveryOptions = { webhook: { ca: tls.ca, timeoutMs: 5_000 }, ...options.delivery };
  const capability = deliveryCapability(runtime, deliveryOptions);
  const ids = createDeliveryIds(secretKey);
  const mailer = createMailer({
    ...(config.smtpUrl && { smtpUrl: config.smtpUrl }),
    dataDir: config.dataDir,
  });
  const fanoutDeps: FanoutDeps = { db, store, ids, now: clock.now, log };
  const delivererDeps: DelivererDeps = {
    db,
    store,
    now: clock.now,
    log,
    schedule: parseRetrySchedule(config.retrySchedule),
    random: () => 0.5,
    channels: {
      db,
      box,
      tokens,
      mailer,
      publicBaseUrl: config.publicBaseUrl,
      smtpFrom: config.smtpFrom,
      webhook: { allow, ca: tls.ca, timeoutMs: 5_000 },
      chat: { slackApiUrl: slack.url, timeoutMs: 5_000 },
    },
  };
  let episodes = 0;
  const head = async () => {
    const { rows } = await db.query<{ head: string | null }>(
      `select transaction_id::text || '/' || global_position as head
         from events order by transaction_id desc, global_position desc limit 1`,
    );
    return rows[0]?.head ?? START;
  };
  const projectAlerts = async () => {
    const target = await head();
    for (let polls = 0; ; polls++) {
      await catchUp(db, store, alertsProjection);
      if (comparePositions(await readCheckpoint(db, alertsProjection.name), target) >= 0) return;
      if (polls > 1000) throw new Error(`the alerts read model did not reach ${target}`);
      await sleep(10);
    }
  };

  const fixture = {
    db,
    store,
    runtime,
    clock,
    tenant,
    caller,
    receiver,
    smtp,
    slack,
    tls,
    webhook,
    chat,
    ids,
    capability,
    fanoutDeps,
    delivererDeps,
    tokens,
    box,
    alerts,
    /** Creates an alert through the alerts service (the real write path) and projects it. */
    async createAlert(overrides: Record<string, unknown> = {}) {
      const created = await alerts.create(caller, {
        title: 'Jensen on podcasts',
        entities: [{ entity_type: 'PERSON', entity_id: ENTITY_ID }],
        notifications: [
          ...RECIPIENTS.map((email) => ({ type: 'EMAIL', email })),
          { type: 'CHAT', chat_connection_id: chat.id, chat_channel_id: 'C0GENERAL' },
          { type: 'WEBHOOK', webhook_connection_id: webhook.id },
        ],
        ...overrides,
      });
      await projectAlerts();
      return created as { id: string };
    },
    async updateAlert(alertId: string, body: Record<string, unknown>) {
      await alerts.update(caller, alertId, body);
      await projectAlerts();
    },
    /** Appends an AlertMatched the way the matcher does; returns its data. */
    async match(alertId: string, overrides: Partial<AlertMatchedEventData> = {}) {
      episodes++;
      const episodeId = `ep-${episodes}-${randomUUID().slice(0, 8)}`;
      const data: AlertMatchedEventData = {
        matchId: randomUUID(),
        alertId,
        projectId: tenant.project.id,
        organizationId: tenant.organization.id,
        kind: 'ENTITY_MENTION',
        entityId: ENTITY_ID,
        entityType: 'PERSON',
        sourceId: episodeId,
        sourceType: 'EPISODE',
        detectedAt: clock.now().toISOString(),
        mentionCount: 2,
        mentionVariants: ['Jensen Huang', 'Jensen'],
        relevance: 'on_target',
        roles: ['GUEST'],
        windows: [
          {
            start_seconds: 10,
            end_seconds: 49,
            lines: [
              {
                number: 2,
                start_seconds: 10,
                end_seconds: 19,
                text: 'Our guest today is Jensen Huang.',
                is_mention: true,
                role: 'HOST',
                speaker: 'Hannah Host',
              },
              {
                number: 3,
                start_seconds: 20,
                end_seconds: 29,
                text: 'Thanks for having me.',
                is_mention: false,
                role: 'GUEST',
                speaker: 'Gary Guest',
              },
              {
                number: 4,
                start_seconds: 30,
                end_seconds: 49,
                text: 'Jensen, tell us about chips.',
                is_mention: true,
                role: 'HOST',
                speaker: 'Hannah Host',
              },
            ],
            segment_id: 'seg-1',
            segment_title: 'Interview',
          },
        ],
        truncated: false,
        isBackfilled: false,
        episode: {
          podcast_id: 'pod-1',
          podcast_title: 'Chip Talk',
          title: `Episode ${episodes}: the future of chips`,
          slug: `episode-${episodes}`,
          podcast_slug: 'chip-talk',
          audio_url: `https://cdn.example.com/${episodeId}.mp3`,
          apple_podcasts_url: `https://podcasts.example.com/chip-talk/${episodeId}`,
          image_url: 'https://cdn.example.com/art.jpg',
          duration_seconds: 3600,
          explicit: false,
          published_at: '2026-11-20T06:00:00.000Z',
          podcast_bias: 'CENTER',
          podcast_popularity: 0.97,
          podcast_popularity_badge: 'Very Popular',
        },
        language: 'en-US',
        ...overrides,
      };
      await store.append(matchStream(data.matchId), [alertMatchedEvent(data)], {
        correlationId: randomUUID(),
        causationId: randomUUID(),
      });
      return data;
    },
    /**
     * Fan-out of everything appended so far. Events become readable only once no older
     * transaction in the cluster is open (other test files run beside this one), so this waits
     * until the consumer has passed the newest event.
     */
    async fanOut() {
      const target = await head();
      for (let polls = 0; ; polls++) {
        await catchUpFanout(fanoutDeps);
        if (comparePositions(await readCheckpoint(db, FANOUT), target) >= 0) return;
        if (polls > 1000) throw new Error(`the fan-out did not reach ${target}`);
        await sleep(10);
      }
    },
    /**
     * Makes every attempt due by the clock, one claim after another, until none is due; with
     * `deps`, through those (a dependency that fails, say).
     */
    async attemptDue(owner = 'test', deps: DelivererDeps = delivererDeps) {
      let attempted = 0;
      for (;;) {
        const claimed = await claimDeliveries(deps.db, {
          owner,
          now: clock.now(),
          limit: 50,
          leaseMs: 30_000,
        });
        if (claimed.length === 0) return attempted;
        const recorder = createRecorder(deps, owner);
        await Promise.all(startAttempts(deps, claimed, recorder));
        await recorder.close();
        attempted += claimed.length;
      }
    },
    /** Fan-out, attempts due now, then the read model. */
    async deliverAll() {
      await fixture.fanOut();
      const attempted = await fixture.attemptDue();
      await fixture.project();
      return attempted;
    },
    async project() {
      const target = await head();
      for (let polls = 0; ; polls++) {
        await catchUp(db, store, deliveriesProjection);
        if (comparePositions(await readCheckpoint(db, deliveriesProjection.name), target) >= 0) return;
        if (polls > 1000) throw new Error(`the deliveries read model did not reach ${target}`);
        await sleep(10);
      }
    },
    async app() {
      return buildHttpApp({ db, cursorKey: deriveKey(secretKey, 'cursor'), routes: capability.routes ?? [] });
    },
    async close() {
      mailer.close();
      await Promise.all([receiver.close(), smtp.close(), slack.close()]);
      await store.close();
      await testDb.drop();
    },
  };
  return fixture;
}

export async function deliveryRows(db: DeliveryFixture['db'], alertId?: string) {
  const { rows } = await db.query<{
    id: string;
    channel: string;
    status: string;
    error_message: string | null;
    attempts: number;
    type: string;
    match_count: number;
  }>(
    `select id, channel, status, error_message, attempts, type, match_count from deliveries
      where $1::text is null or alert_id = $1::text order by channel, created_at, id`,
    [alertId ?? null],
  );
  return rows;
}
