import { fanoutSubscriber, runFanout } from '../../consumers/delivery-fanout/fanout.ts';
import { runDigestScheduler } from '../../consumers/digests/digests.ts';
import { deliveriesProjection } from '../../projections/deliveries/projection.ts';
import { createDisableTokens } from '../alerts/disable-tokens.ts';
import type { ChatClientOptions } from '../chat/client.ts';
import { createSecretBox } from '../crypto/secret-box.ts';
import { createMailer, type Mailer } from '../email/mailer.ts';
import { metrics } from '../observability/metrics.ts';
import type { Capability, Runtime } from '../runtime.ts';
import { parseAllowCidrs } from '../webhooks/address-rule.ts';
import { createWebhookPools } from '../webhooks/pools.ts';
import type { WebhookSenderOptions } from '../webhooks/send.ts';
import { sendTestWebhooks } from '../webhooks/test-webhook.ts';
import { createDeliveryIds } from './ids.ts';
import { parseRetrySchedule } from './queue/schedule.ts';
import type { ChannelDeps } from './queue/send.ts';
import { type DelivererOptions, runDeliveryWorker } from './queue/worker.ts';
import { deliveryRoutes } from './views/routes.ts';

export interface DeliveryOptions {
  /** Overrides of the webhook sender's options (tests pass their CA as `ca`). */
  webhook?: Omit<WebhookSenderOptions, 'allow' | 'now' | 'pools'>;
  chat?: ChatClientOptions;
  mailer?: Mailer;
  worker?: DelivererOptions;
  digests?: { graceMs?: number; tickMs?: number };
  /** Jitter source for retry delays. */
  random?: () => number;
}

/**
 * Deliveries: the fan-out consumer, the queue worker and the digest scheduler (role deliverer),
 * the deliveries read model, and the delivery, webhook-payload, test-webhook and landing routes.
 */
export function deliveryCapability(runtime: Runtime, options: DeliveryOptions = {}): Capability {
  const { db, store, config } = runtime;
  const now = () => runtime.now();
  const log = runtime.log.child({ capability: 'delivery' });
  const box = createSecretBox(runtime.secretKey, runtime.previousSecretKeys);
  const ids = createDeliveryIds(runtime.secretKey);
  const schedule = parseRetrySchedule(config.retrySchedule);
  const webhook: WebhookSenderOptions = {
    allow: parseAllowCidrs(config.webhookAllowCidrs),
    ...options.webhook,
  };
  const chat: ChatClientOptions = {
    ...(config.slackApiUrl && { slackApiUrl: config.slackApiUrl }),
    ...options.chat,
  };
  let mailer = options.mailer;
  const channels = (): ChannelDeps => {
    mailer ??= createMailer({ ...(config.smtpUrl && { smtpUrl: config.smtpUrl }), dataDir: config.dataDir });
    return {
      db,
      box,
      tokens: createDisableTokens(runtime.secretKey, runtime.previousSecretKeys),
      mailer,
      publicBaseUrl: config.publicBaseUrl,
      smtpFrom: config.smtpFrom,
      // Signatures carry the wall-clock time: receivers check it against theirs (replay protection).
      webhook,
      chat,
    };
  };

  const fanoutDeps = { db, store, ids, now, log: log.child({ worker: 'fanout' }) };
  return {
    name: 'delivery',
    routes: [
      deliveryRoutes({
        store,
        testWebhooks: (alert) => sendTestWebhooks({ db, box, webhook, now }, alert),
      }),
    ],
    projections: [deliveriesProjection],
    workers: [
      {
        name: 'delivery-fanout',
        role: 'deliverer',
        subscriber: fanoutSubscriber(fanoutDeps),
        run: (signal) => runFanout(fanoutDeps, signal),
      },
      {
        name: 'delivery-worker',
        role: 'deliverer',
        async run(signal) {
          // Keep-alive connections for this worker's sends, closed when it stops. As many per
          // destination as attempts in flight, so no send waits in a pool for a connection.
          const pools = createWebhookPools({ connectionsPerPool: options.worker?.concurrency ?? 64 });
          const deps = { ...channels(), webhook: { ...webhook, pools } };
          // Deliveries waiting for a retry after a failed attempt, counted at scrape time.
          const unregister = metrics.registerRetryQueueDepth(async () => {
            const { rows } = await db.query<{ n: number }>(
              'select count(*)::int as n from delivery_queue where attempts > 0',
            );
            return rows[0]?.n;
          });
          try {
            await runDeliveryWorker(
              {
                db,
                store,
                channels: deps,
                schedule,
                now,
                log: log.child({ worker: 'deliveries' }),
                ...(options.random && { random: options.random }),
              },
              signal,
              options.worker,
            );
          } finally {
            unregister();
            if (!options.mailer) deps.mailer.close();
            await pools.close();
          }
        },
      },
      {
        name: 'delivery-digests',
        role: 'deliverer',
        run: (signal) =>
          runDigestScheduler(
            {
              db,
              store,
              ids,
              now,
              log: log.child({ worker: 'digests' }),
              ...(options.digests?.graceMs !== undefined && { graceMs: options.digests.graceMs }),
            },
            signal,
            options.digests?.tickMs !== undefined ? { tickMs: options.digests.tickMs } : {},
          ),
      },
    ],
  };
}
