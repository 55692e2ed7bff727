import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertsProjection } from '../../projections/alerts/projection.ts';
import { alertsCapability } from '../../src/alerts/capability.ts';
import { deliveryCapability } from '../../src/delivery/capability.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { verifyEmail } from '../../src/platform/organizations.ts';
import type { Runtime } from '../../src/runtime.ts';
import { deriveKey } from '../../src/secret-key.ts';
import { type DeliveryFixture, deliveryFixture, deliveryRows, RECIPIENTS } from '../delivery/support.ts';
import { eventually } from '../e2e/harness.ts';
import { catchUp } from '../support/projections.ts';
import { parseMail } from '../support/smtp.ts';

const NEWCOMER = 'new@example.com';

describe('email disable links across a rotation of EARSHOT_SECRET_KEY', () => {
  let f: DeliveryFixture;
  let keyA: Buffer;
  const keyB = randomBytes(32);
  const apps: FastifyInstance[] = [];
  let alertId: string;

  beforeAll(async () => {
    // The fixture's key is the one everything was made under: A.
    f = await deliveryFixture();
    keyA = f.runtime.secretKey;
    await verifyEmail(f.db, f.tenant.organization.id, NEWCOMER);
    const alert = await f.createAlert({
      notifications: RECIPIENTS.map((email) => ({ type: 'EMAIL', email })),
    });
    alertId = alert.id;
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await f?.close();
  });

  /** A process started with `secretKey` and `previous`: its alerts API and its delivery workers. */
  async function processWith(secretKey: Buffer, previous: Buffer[]) {
    const runtime: Runtime = { ...f.runtime, secretKey, previousSecretKeys: previous };
    const alerts = alertsCapability(runtime, { listChannels: async () => [] });
    const app = await buildHttpApp({
      db: f.db,
      cursorKey: deriveKey(secretKey, 'cursor'),
      routes: alerts.routes ?? [],
    });
    apps.push(app);
    const delivery = deliveryCapability(runtime);
    return {
      alerts,
      app,
      /** Runs the fan-out and the delivery worker until `emails` more messages have been sent. */
      async deliver(emails: number) {
        const before = f.smtp.messages.length;
        await f.match(alertId);
        const controller = new AbortController();
        setMaxListeners(0, controller.signal);
        const running = (delivery.workers ?? [])
          .filter((worker) => worker.name !== 'delivery-digests')
          .map((worker) => worker.run(controller.signal));
        try {
          await eventually(
            async () => (f.smtp.messages.length >= before + emails ? true : undefined),
            15_000,
            `${emails} emails`,
          );
          // The attempt is recorded after the send: wait for the queue to be empty.
          await eventually(async () => {
            const { rows } = await f.db.query<{ n: number }>('select count(*)::int as n from delivery_queue');
            return rows[0]!.n === 0 ? true : undefined;
          });
        } finally {
          controller.abort();
          await Promise.all(running);
        }
        await f.project();
        return f.smtp.messages.slice(before);
      },
    };
  }

  const tokenOf = (raw: string) => {
    const link = parseMail(raw).header('list-unsubscribe') ?? '';
    return /token=([\w-]{43})>$/.exec(link)?.[1];
  };

  const inspect = (app: FastifyInstance, token: string | undefined) =>
    app.inject({ method: 'GET', url: `/v1/alerts/disable?token=${token}` });

  it('sends recipients issued a token under A, and one issued under B, links that work once B is current', async () => {
    const rotated = await processWith(keyB, [keyA]);
    // A recipient added after the rotation is issued a token under B.
    await rotated.alerts.service.update(f.caller, alertId, {
      notifications: [...RECIPIENTS, NEWCOMER].map((email) => ({ type: 'EMAIL', email })),
    });
    await eventually(async () => {
      await catchUp(f.db, f.store, alertsProjection);
      const { rows } = await f.db.query('select 1 from alert_disable_tokens where alert_id = $1', [alertId]);
      return rows.length === 3 ? true : undefined;
    });

    const mails = await rotated.deliver(3);
    expect(mails.flatMap((m) => m.to).sort()).toEqual([...RECIPIENTS, NEWCOMER].sort());
    for (const mail of mails) {
      const answer = await inspect(rotated.app, tokenOf(mail.raw));
      expect(answer.statusCode).toBe(200);
      expect(answer.json()).toMatchObject({ alert: { id: alertId }, email: mail.to[0], is_active: true });
    }
  });

  it('sends working links from processes still on A once they are given B as a previous key', async () => {
    // The staging step of a rolling rotation: old processes know B before any process uses it.
    const staged = await processWith(keyA, [keyB]);
    const mails = await staged.deliver(3);
    for (const mail of mails) expect((await inspect(staged.app, tokenOf(mail.raw))).statusCode).toBe(200);
  });

  it('fails, with the reason, only the recipients whose token needs A once A is removed', async () => {
    const withoutA = await processWith(keyB, []);
    const mails = await withoutA.deliver(1);
    expect(mails.map((m) => m.to)).toEqual([[NEWCOMER]]);
    expect((await inspect(withoutA.app, tokenOf(mails[0]!.raw))).statusCode).toBe(200);
    // Every earlier delivery went to every recipient: only this one records failures.
    const partly = (await deliveryRows(f.db, alertId)).filter((row) => row.error_message !== null);
    expect(partly).toHaveLength(1);
    expect(partly[0]!.status).toBe('SENT');
    expect(partly[0]!.error_message).toContain('2 of 3 recipients failed');
    expect(partly[0]!.error_message).toContain('EARSHOT_PREVIOUS_SECRET_KEYS');
  });
});
