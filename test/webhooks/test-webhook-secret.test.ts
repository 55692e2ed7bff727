import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretBox } from '../../src/crypto/secret-box.ts';
import { checkWebhookUrl, parseAllowCidrs } from '../../src/webhooks/address-rule.ts';
import { rotateWebhookSecret, SECRET_PURPOSE } from '../../src/webhooks/connections.ts';
import { type DeliveryFixture, deliveryFixture } from '../delivery/support.ts';

describe('POST /v1/alerts/{id}/test-webhook with a secret the configured key cannot open', () => {
  let f: DeliveryFixture;
  let app: FastifyInstance;
  let alertId: string;

  beforeAll(async () => {
    f = await deliveryFixture();
    app = await f.app();
    alertId = (await f.createAlert()).id;
    // Sealed under a key this process does not have, as after EARSHOT_SECRET_KEY changed.
    await f.db.query('update webhook_connections set secret_sealed = $2 where id = $1', [
      f.webhook.id,
      createSecretBox(randomBytes(32)).seal(f.webhook.secret, SECRET_PURPOSE),
    ]);
  });
  afterAll(async () => {
    await app?.close();
    await f?.close();
  });

  it('answers 409 connection_secret_unreadable naming the connection, and sends nothing', async () => {
    const before = f.receiver.requests.length;
    const response = await app.inject({
      method: 'POST',
      url: `/v1/alerts/${alertId}/test-webhook`,
      headers: f.tenant.headers,
    });
    expect(response.statusCode).toBe(409);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.json()).toMatchObject({
      status: 409,
      error_code: 'connection_secret_unreadable',
      detail: expect.stringContaining(`webhook connection ${f.webhook.id}`),
      errors: [{ location: '/notifications/3/webhook_connection_id', value: f.webhook.id }],
    });
    expect(f.receiver.requests.length).toBe(before);
  });

  it('sends again once the secret is rotated', async () => {
    const allow = parseAllowCidrs(f.runtime.config.webhookAllowCidrs);
    await rotateWebhookSecret(
      { db: f.db, box: f.box, now: () => new Date(), checkUrl: (url) => checkWebhookUrl(url, { allow }) },
      f.tenant.project.id,
      f.webhook.id,
    );
    const response = await app.inject({
      method: 'POST',
      url: `/v1/alerts/${alertId}/test-webhook`,
      headers: f.tenant.headers,
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().results).toEqual([expect.objectContaining({ delivered: true })]);
  });
});
