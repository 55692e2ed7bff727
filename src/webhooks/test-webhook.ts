import type { Alert } from '../alerts/alert.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { openForRoute } from '../crypto/unreadable-secret.ts';
import type { Queryable } from '../db/db.ts';
import { base62 } from '../ids.ts';
import { webhookDestination } from './connections.ts';
import { sendWebhook, type WebhookSenderOptions } from './send.ts';

export interface TestWebhookResult {
  delivered: boolean;
  url: string | null;
  webhook_connection_id: string;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
}

export interface TestWebhookDeps {
  db: Queryable;
  box: SecretBox;
  webhook: WebhookSenderOptions;
  now(): Date;
}

/**
 * POST /v1/alerts/{id}/test-webhook: an `alert.test` body, signed like any delivery, to each of the
 * alert's webhook connections at once. Nothing is recorded; each result says what happened.
 */
export async function sendTestWebhooks(deps: TestWebhookDeps, alert: Alert): Promise<TestWebhookResult[]> {
  const ids = [
    ...new Set(alert.notifications.flatMap((n) => (n.type === 'WEBHOOK' ? [n.webhookConnectionId] : []))),
  ];
  const destinations = await Promise.all(ids.map((id) => webhookDestination(deps, id)));
  // Every secret is opened before anything is sent: one that cannot be opened answers 409 alone.
  const secrets = destinations.map((destination, i) => {
    if (!destination || destination.projectId !== alert.projectId || destination.revokedAt) return undefined;
    const at = alert.notifications.findIndex((n) => n.type === 'WEBHOOK' && n.webhookConnectionId === ids[i]);
    return openForRoute(
      () => destination.secret,
      `The signing secret of webhook connection ${destination.id}`,
      'Rotate the secret (POST …/webhooks/connections/{id}/secret/rotate) and give the receiver the new one.',
      {
        location: `/notifications/${at}/webhook_connection_id`,
        message: 'signing secret sealed under a key that is not configured',
        value: destination.id,
      },
    );
  });
  return Promise.all(
    ids.map(async (id, i): Promise<TestWebhookResult> => {
      const destination = destinations[i];
      const failed = (url: string | null, error: string): TestWebhookResult => ({
        delivered: false,
        url,
        webhook_connection_id: id,
        duration_ms: 0,
        status_code: null,
        error,
      });
      if (!destination || destination.projectId !== alert.projectId)
        return failed(null, `webhook connection ${id} does not exist`);
      if (destination.revokedAt) return failed(destination.url, `webhook connection ${id} is revoked`);
      const deliveryId = `test_${base62(22)}`;
      const body = JSON.stringify({
        type: 'alert.test',
        delivery_id: deliveryId,
        created_at: deps.now().toISOString(),
        alert: {
          id: alert.id,
          kind: alert.kind,
          title: alert.title,
          project_id: alert.projectId,
          organization_id: alert.organizationId,
        },
        match_count: 0,
        matches: [],
      });
      const outcome = await sendWebhook(
        { url: destination.url, deliveryId, body, secret: secrets[i]! },
        deps.webhook,
      );
      return {
        delivered: outcome.ok,
        url: destination.url,
        webhook_connection_id: id,
        duration_ms: outcome.durationMs,
        status_code: outcome.status ?? null,
        error: outcome.ok ? null : (outcome.error ?? 'the attempt failed'),
      };
    }),
  );
}
