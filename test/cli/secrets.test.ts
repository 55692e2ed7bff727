import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addChatConnection } from '../../src/chat/connections.ts';
import { resealSecrets } from '../../src/cli/secrets.ts';
import { createSecretBox } from '../../src/crypto/secret-box.ts';
import type { Queryable } from '../../src/db/db.ts';
import { deliveryCapability } from '../../src/delivery/capability.ts';
import type { Runtime } from '../../src/runtime.ts';
import { type RunningService, startService } from '../../src/service.ts';
import { checkWebhookUrl, parseAllowCidrs } from '../../src/webhooks/address-rule.ts';
import {
  createWebhookConnection,
  rotateWebhookSecret,
  type WebhookConnectionWithSecret,
  webhookDestination,
} from '../../src/webhooks/connections.ts';
import { type DeliveryFixture, deliveryFixture, RECIPIENTS } from '../delivery/support.ts';
import { eventually } from '../e2e/harness.ts';
import { runCli, schemaUrl } from '../support/cli.ts';

/**
 * A rotation of EARSHOT_SECRET_KEY from A to B, end to end on the real PostgreSQL: connections
 * sealed under A, processes restarted with B and A as previous, `earshot secrets reseal`, then B alone.
 */
describe('earshot secrets reseal', () => {
  let f: DeliveryFixture;
  let keyA: Buffer;
  const keyB = randomBytes(32);
  let schema: string;
  let second: WebhookConnectionWithSecret;
  let alertId: string;
  let cursorUnderA: string;
  const services: RunningService[] = [];

  beforeAll(async () => {
    // Everything the fixture makes (a webhook and a chat connection) is sealed under its key: A.
    f = await deliveryFixture();
    keyA = f.runtime.secretKey;
    schema = (await f.db.query<{ schema: string }>('select current_schema() as schema')).rows[0]!.schema;
    second = await createWebhookConnection(connectionDeps(createSecretBox(keyA)), {
      projectId: f.tenant.project.id,
      url: f.receiver.url(),
      name: 'second',
    });
    const alert = await f.createAlert({
      notifications: [
        { type: 'CHAT', chat_connection_id: f.chat.id, chat_channel_id: 'C0GENERAL' },
        { type: 'WEBHOOK', webhook_connection_id: f.webhook.id },
      ],
    });
    alertId = alert.id;
    // Its recipients are issued disable tokens under A.
    await f.createAlert({ notifications: RECIPIENTS.map((email) => ({ type: 'EMAIL', email })) });
  });
  afterAll(async () => {
    for (const service of services) await service.stop();
    await f?.close();
  });

  function connectionDeps(box: ReturnType<typeof createSecretBox>) {
    const allow = parseAllowCidrs(['127.0.0.0/8']);
    return { db: f.db, box, now: f.clock.now, checkUrl: (url: string) => checkWebhookUrl(url, { allow }) };
  }

  const runtimeWith = (secretKey: Buffer, previous: Buffer[]): Runtime => ({
    ...f.runtime,
    config: { ...f.runtime.config, port: 0, host: '127.0.0.1', previousSecretKeys: previous },
    secretKey,
    previousSecretKeys: previous,
  });

  /** An api process, wired as `earshot serve --roles api` wires it. */
  async function apiWith(secretKey: Buffer, previous: Buffer[]) {
    const service = await startService(runtimeWith(secretKey, previous), ['api']);
    services.push(service);
    return (path: string) =>
      fetch(`${service.url}/v1/projects/${f.tenant.project.id}${path}`, { headers: f.tenant.headers });
  }

  /** A deliverer process: one match of the alert, sent to the chat channel and the webhook. */
  async function deliverWith(secretKey: Buffer, previous: Buffer[]) {
    const requests = f.receiver.requests.length;
    const posted = f.slack.posted.length;
    const delivery = deliveryCapability(runtimeWith(secretKey, previous), {
      webhook: { ca: f.tls.ca, timeoutMs: 5_000 },
    });
    await f.match(alertId);
    const controller = new AbortController();
    setMaxListeners(0, controller.signal);
    const running = (delivery.workers ?? [])
      .filter((worker) => worker.name !== 'delivery-digests')
      .map((worker) => worker.run(controller.signal));
    try {
      await eventually(async () => {
        const { rows } = await f.db.query<{ n: number }>('select count(*)::int as n from delivery_queue');
        const sent = f.receiver.requests.length > requests && f.slack.posted.length > posted;
        return sent && rows[0]!.n === 0 ? true : undefined;
      });
    } finally {
      controller.abort();
      await Promise.all(running);
    }
    const request = f.receiver.requests.at(-1)!;
    // Signed with the connection's secret as created: it was opened, whichever key sealed it.
    new Webhook(f.webhook.secret).verify(
      request.body.toString('utf8'),
      request.headers as Record<string, string>,
    );
    expect(f.slack.calls.filter((c) => c.method === 'chat.postMessage').at(-1)?.token).toBe(
      'xoxb-test-token',
    );
  }

  const sealedValues = async () => {
    const { rows } = await f.db.query<{ value: string }>(
      `select secret_sealed as value from webhook_connections
       union all select bot_token_sealed from chat_connections`,
    );
    return rows.map((row) => row.value);
  };

  const reseal = async (previous: Buffer[]) => {
    const result = await runCli(['secrets', 'reseal', '--json'], {
      DATABASE_URL: schemaUrl(schema),
      DATA_DIR: f.runtime.config.dataDir,
      EARSHOT_SECRET_KEY: keyB.toString('base64'),
      EARSHOT_PREVIOUS_SECRET_KEYS: previous.map((key) => key.toString('base64')).join(','),
    });
    return { code: result.code, stderr: result.stderr, json: JSON.parse(result.stdout || 'null') };
  };

  it('lets processes restarted with B, and A as previous, page on, list channels and deliver', async () => {
    const underA = await apiWith(keyA, []);
    const first = await underA('/webhooks/connections?limit=1');
    expect(first.status).toBe(200);
    const page = (await first.json()) as { data: Array<{ id: string }>; cursor: string };
    cursorUnderA = page.cursor;

    // A rolling restart: the cursor an old process issued is accepted by a new one.
    const rotated = await apiWith(keyB, [keyA]);
    const next = await rotated(`/webhooks/connections?limit=1&cursor=${encodeURIComponent(cursorUnderA)}`);
    expect(next.status).toBe(200);
    const rest = (await next.json()) as { data: Array<{ id: string }> };
    expect([...page.data, ...rest.data].map((c) => c.id).sort()).toEqual([f.webhook.id, second.id].sort());
    expect((await rotated(`/chat/connections/${f.chat.id}/channels`)).status).toBe(200);

    await deliverWith(keyB, [keyA]);
    // Nothing was moved yet: every value is still sealed under A.
    const boxB = createSecretBox(keyB, [keyA]);
    expect((await sealedValues()).every((value) => boxB.needsReseal(value))).toBe(true);
  });

  it('moves every value to B, once, and then processes with B alone use them', async () => {
    // The two recipients' links still need A: the count says A must stay listed for them.
    expect(await reseal([keyA])).toMatchObject({
      code: 0,
      json: { resealed: 3, remaining: 0, disableLinksNeedingPreviousKeys: 2 },
    });
    expect(await reseal([keyA])).toMatchObject({ code: 0, json: { resealed: 0, remaining: 0 } });
    const onlyB = createSecretBox(keyB);
    expect((await sealedValues()).some((value) => onlyB.needsReseal(value))).toBe(false);
    const destination = await webhookDestination({ db: f.db, box: onlyB }, second.id);
    expect(destination?.secret).toBe(second.secret);

    const withoutA = await apiWith(keyB, []);
    expect((await withoutA(`/chat/connections/${f.chat.id}/channels`)).status).toBe(200);
    await deliverWith(keyB, []);
    // What removing A costs: its cursors are refused, and the client starts the listing again.
    const stale = await withoutA(`/webhooks/connections?limit=1&cursor=${encodeURIComponent(cursorUnderA)}`);
    expect(stale.status).toBe(400);
    expect(((await stale.json()) as { error_code: string }).error_code).toBe('invalid_cursor');
  });

  it('never puts back an old value over one replaced while it runs', async () => {
    // A process still on A creates a connection, and rotates its secret just as the reseal swaps it.
    const underA = connectionDeps(createSecretBox(keyA));
    const connection = await createWebhookConnection(underA, {
      projectId: f.tenant.project.id,
      url: f.receiver.url(),
    });
    let rotated: WebhookConnectionWithSecret | undefined;
    const db: Queryable = {
      exec: (script) => f.db.exec(script),
      async query(text, params) {
        if (!rotated && text.startsWith('update webhook_connections') && params?.[0] === connection.id)
          rotated = await rotateWebhookSecret(underA, f.tenant.project.id, connection.id);
        return f.db.query(text, params);
      },
    };
    const result = await resealSecrets({ db, box: createSecretBox(keyB, [keyA]) });
    expect(result).toEqual({ resealed: 1, remaining: 0 });
    expect(rotated?.secret).not.toBe(connection.secret);
    const destination = await webhookDestination({ db: f.db, box: createSecretBox(keyB) }, connection.id);
    expect(destination?.secret).toBe(rotated?.secret);
  });

  it('reports a value no configured key opens and exits non-zero, leaving it as it is', async () => {
    const unknownKey = randomBytes(32);
    const stray = await addChatConnection(
      { db: f.db, box: createSecretBox(unknownKey), now: f.clock.now },
      { projectId: f.tenant.project.id, teamId: 'T02', teamName: 'Other', botToken: 'xoxb-other' },
    );
    const before = await sealedValues();
    const result = await reseal([keyA]);
    expect(result.code).toBe(1);
    expect(result.json).toEqual({
      resealed: 0,
      remaining: 1,
      unopenable: [
        { table: 'chat_connections', id: stray.id, error: expect.stringMatching(/not configured/) },
      ],
      disableLinksNeedingPreviousKeys: 2,
    });
    expect(await sealedValues()).toEqual(before);
  });
});
