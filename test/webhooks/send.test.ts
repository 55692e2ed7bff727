import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseAllowCidrs, type Resolve } from '../../src/webhooks/address-rule.ts';
import { createWebhookPools, type WebhookPools } from '../../src/webhooks/pools.ts';
import { isRetryableStatus, sendWebhook, type WebhookSenderOptions } from '../../src/webhooks/send.ts';
import { generateWebhookSecret } from '../../src/webhooks/signature.ts';
import { type HttpsReceiver, startHttpsReceiver } from '../support/https-receiver.ts';

const LOOPBACK = parseAllowCidrs(['127.0.0.0/8']);
const toLoopback: Resolve = async () => [{ address: '127.0.0.1', family: 4 }];

let receiver: HttpsReceiver;
let options: WebhookSenderOptions;
const secret = generateWebhookSecret();
const body = JSON.stringify({
  type: 'alert.match',
  delivery_id: 'dlv_7Hq',
  title: 'Grüße — “quoted” ✓',
  n: 1.5e3,
});

beforeAll(async () => {
  receiver = await startHttpsReceiver();
  options = { allow: LOOPBACK, resolve: toLoopback, ca: receiver.tls.ca, timeoutMs: 5_000 };
});
afterAll(() => receiver.close());
beforeEach(() => {
  receiver.requests.length = 0;
});

describe('sending a webhook', () => {
  it('POSTs the exact body with Standard Webhooks headers that the standardwebhooks verifier accepts', async () => {
    const outcome = await sendWebhook(
      {
        url: receiver.url('/hooks/in?src=earshot', 'hooks.earshot.test'),
        deliveryId: 'dlv_7Hq',
        body,
        secret,
      },
      options,
    );
    expect(outcome).toMatchObject({ ok: true, status: 200, retryable: false, address: '127.0.0.1' });
    expect(receiver.requests).toHaveLength(1);
    const [received] = receiver.requests;
    expect(received?.method).toBe('POST');
    expect(received?.path).toBe('/hooks/in?src=earshot');
    expect(received?.body.equals(Buffer.from(body, 'utf8'))).toBe(true);
    expect(received?.headers['content-type']).toBe('application/json');
    expect(received?.headers['webhook-id']).toBe('dlv_7Hq');
    expect(received?.headers['x-webhook-signature']).toBe(received?.headers['webhook-signature']);
    const headers = received?.headers as Record<string, string>;
    expect(new Webhook(secret).verify(received?.body.toString('utf8') ?? '', headers)).toEqual(
      JSON.parse(body),
    );
  });

  it('signs each attempt with its own timestamp and the same webhook-id', async () => {
    const times = [new Date('2030-01-01T00:00:00Z'), new Date('2030-01-01T00:05:00Z')];
    for (const at of times) {
      await sendWebhook(
        { url: receiver.url('/hook', 'hooks.earshot.test'), deliveryId: 'dlv_same', body, secret },
        { ...options, now: () => at },
      );
    }
    expect(receiver.requests.map((r) => r.headers['webhook-id'])).toEqual(['dlv_same', 'dlv_same']);
    expect(receiver.requests.map((r) => r.headers['webhook-timestamp'])).toEqual([
      '1893456000',
      '1893456300',
    ]);
  });

  it('connects to the address that was checked and never resolves the name again', async () => {
    let lookups = 0;
    // The first answer passes the rule; any later answer would point somewhere nothing listens.
    const rebinding: Resolve = async () => {
      lookups += 1;
      return [{ address: lookups === 1 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    };
    const outcome = await sendWebhook(
      { url: receiver.url('/pinned', 'rebind.earshot.test'), deliveryId: 'dlv_pin', body, secret },
      { ...options, resolve: rebinding },
    );
    expect(outcome).toMatchObject({ ok: true, status: 200, address: '127.0.0.1' });
    expect(lookups).toBe(1);
    expect(receiver.requests[0]?.headers.host).toBe(`rebind.earshot.test:${receiver.port}`);
  });

  it('posts to a literal IP address URL and verifies the certificate against that IP', async () => {
    const outcome = await sendWebhook(
      { url: receiver.url('/ip'), deliveryId: 'dlv_ip', body, secret },
      options,
    );
    expect(outcome).toMatchObject({ ok: true, status: 200 });
  });

  it('applies the URL rule again at send time and sends nothing to a now-private address', async () => {
    const outcome = await sendWebhook(
      { url: receiver.url('/hook', 'hooks.earshot.test'), deliveryId: 'dlv_priv', body, secret },
      { ...options, allow: parseAllowCidrs([]) },
    );
    expect(outcome).toMatchObject({ ok: false, retryable: false });
    expect(outcome.error).toContain('resolves to 127.0.0.1, which is not a public address (loopback address');
    expect(outcome.status).toBeUndefined();
    expect(receiver.requests).toHaveLength(0);
  });

  it('treats a host that does not resolve as a retryable failure', async () => {
    const outcome = await sendWebhook(
      { url: 'https://gone.earshot.test/hook', deliveryId: 'dlv_dns', body, secret },
      {
        ...options,
        resolve: async () => {
          throw Object.assign(new Error('getaddrinfo EAI_AGAIN gone.earshot.test'), { code: 'EAI_AGAIN' });
        },
      },
    );
    expect(outcome).toMatchObject({ ok: false, retryable: true });
    expect(outcome.error).toContain('could not be resolved');
  });

  it('does not follow a redirect and reports it as a permanent failure', async () => {
    receiver.respondWith({ status: 302, headers: { location: receiver.url('/elsewhere') } });
    const outcome = await sendWebhook(
      { url: receiver.url('/moved'), deliveryId: 'dlv_302', body, secret },
      options,
    );
    expect(outcome).toMatchObject({ ok: false, status: 302, retryable: false });
    expect(outcome.error).toContain(`redirect to ${receiver.url('/elsewhere')} not followed`);
    expect(receiver.requests.map((r) => r.path)).toEqual(['/moved']);
  });

  it('gives up on a receiver that answers too slowly, as a retryable timeout', async () => {
    receiver.respondWith({ delayMs: 3_000 });
    const outcome = await sendWebhook(
      { url: receiver.url('/slow'), deliveryId: 'dlv_slow', body, secret },
      { ...options, timeoutMs: 300 },
    );
    expect(outcome).toMatchObject({ ok: false, retryable: true, error: 'timed out after 300 ms' });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(250);
    expect(outcome.durationMs).toBeLessThan(2_000);
  });

  it('reads Retry-After in seconds from a 429', async () => {
    receiver.respondWith({ status: 429, headers: { 'retry-after': '120' }, body: '{"error":"slow down"}' });
    const outcome = await sendWebhook({ url: receiver.url(), deliveryId: 'dlv_429', body, secret }, options);
    expect(outcome).toMatchObject({ ok: false, status: 429, retryable: true, retryAfterMs: 120_000 });
    expect(outcome.error).toBe('HTTP 429: {"error":"slow down"}');
  });

  it('reads Retry-After as an HTTP date from a 503', async () => {
    const now = new Date('2030-06-01T12:00:00Z');
    receiver.respondWith({ status: 503, headers: { 'retry-after': 'Sat, 01 Jun 2030 12:01:30 GMT' } });
    const outcome = await sendWebhook(
      { url: receiver.url(), deliveryId: 'dlv_503', body, secret },
      { ...options, now: () => now },
    );
    expect(outcome).toMatchObject({ ok: false, status: 503, retryable: true, retryAfterMs: 90_000 });
  });

  it.each([
    [400, false],
    [401, false],
    [404, false],
    [410, false],
    [413, false],
    [408, true],
    [500, true],
    [502, true],
  ])('classifies HTTP %i as retryable=%s', async (status, retryable) => {
    receiver.respondWith({ status, body: `status ${status}` });
    const outcome = await sendWebhook(
      { url: receiver.url(), deliveryId: `dlv_${status}`, body, secret },
      options,
    );
    expect(outcome).toMatchObject({
      ok: false,
      status,
      retryable,
      error: `HTTP ${status}: status ${status}`,
    });
    expect(isRetryableStatus(status)).toBe(retryable);
  });

  it('treats a refused connection as a retryable network failure', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as { port: number };
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const outcome = await sendWebhook(
      { url: `https://127.0.0.1:${port}/hook`, deliveryId: 'dlv_ref', body, secret },
      options,
    );
    expect(outcome).toMatchObject({ ok: false, retryable: true });
    expect(outcome.error).toContain('ECONNREFUSED');
  });

  it('refuses a certificate it does not trust, as a retryable failure', async () => {
    const { ca: _ca, ...untrusting } = options;
    const outcome = await sendWebhook(
      { url: receiver.url(), deliveryId: 'dlv_tls', body, secret },
      untrusting,
    );
    expect(outcome).toMatchObject({ ok: false, retryable: true });
    expect(outcome.error).toMatch(/certificate/i);
    expect(receiver.requests).toHaveLength(0);
  });

  it('trusts a CA given through NODE_EXTRA_CA_CERTS when no CA is injected', async () => {
    // NODE_EXTRA_CA_CERTS is read once at process start, so the production path runs in a child.
    const script = join(receiver.tls.dir, 'send-with-extra-ca.mts');
    const sender = fileURLToPath(new URL('../../src/webhooks/send.ts', import.meta.url));
    const rule = fileURLToPath(new URL('../../src/webhooks/address-rule.ts', import.meta.url));
    await writeFile(
      script,
      `import { sendWebhook } from ${JSON.stringify(sender)};
import { parseAllowCidrs } from ${JSON.stringify(rule)};
const outcome = await sendWebhook(
  { url: ${JSON.stringify(receiver.url('/extra-ca'))}, deliveryId: 'dlv_env', body: '{}', secret: ${JSON.stringify(secret)} },
  { allow: parseAllowCidrs(['127.0.0.0/8']) },
);
process.stdout.write(JSON.stringify(outcome));
`,
    );
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: { ...process.env, NODE_EXTRA_CA_CERTS: join(receiver.tls.dir, 'ca.pem') },
    });
    expect(JSON.parse(stdout)).toMatchObject({ ok: true, status: 200 });
    expect(receiver.requests.map((r) => r.path)).toEqual(['/extra-ca']);
  });
});

describe('reusing connections', () => {
  let pools: WebhookPools;
  beforeEach(() => {
    pools = createWebhookPools();
  });
  afterEach(() => pools.close());
  const send = (url: string, extra: Partial<WebhookSenderOptions> = {}) =>
    sendWebhook({ url, deliveryId: 'dlv_pool', body, secret }, { ...options, pools, ...extra });

  it('sends the second webhook to the same receiver over the TLS connection of the first', async () => {
    const before = receiver.connections;
    const url = receiver.url('/pooled', 'hooks.earshot.test');
    expect(await send(url)).toMatchObject({ ok: true, status: 200 });
    expect(await send(url)).toMatchObject({ ok: true, status: 200 });
    expect(receiver.requests.map((r) => r.path)).toEqual(['/pooled', '/pooled']);
    expect(receiver.connections - before).toBe(1);
    expect(pools.size).toBe(1);
  });

  it('checks the URL again at every send, and a name that now resolves elsewhere never uses the old connection', async () => {
    // The same origin (name and port) served at a second loopback address.
    const moved = await startHttpsReceiver(receiver.tls, { host: '127.0.0.2', port: receiver.port });
    try {
      let answer = '127.0.0.1';
      let lookups = 0;
      const resolve: Resolve = async () => {
        lookups += 1;
        return [{ address: answer, family: 4 }];
      };
      const url = receiver.url('/moving', 'rebind.earshot.test');
      const before = receiver.connections;
      expect(await send(url, { resolve })).toMatchObject({ ok: true, address: '127.0.0.1' });
      answer = '127.0.0.2';
      expect(await send(url, { resolve })).toMatchObject({ ok: true, address: '127.0.0.2' });
      expect(lookups).toBe(2);
      expect(receiver.requests).toHaveLength(1);
      expect(receiver.connections - before).toBe(1);
      expect(moved.requests.map((r) => r.path)).toEqual(['/moving']);
      expect(moved.requests[0]?.headers.host).toBe(`rebind.earshot.test:${receiver.port}`);
      expect(moved.connections).toBe(1);
      expect(pools.size).toBe(2);
    } finally {
      await moved.close();
    }
  });

  it('refuses a name that now resolves to a disallowed address before any connection, pooled or new', async () => {
    let answer = '127.0.0.1';
    const resolve: Resolve = async () => [{ address: answer, family: 4 }];
    const url = receiver.url('/then-private', 'rebind.earshot.test');
    const before = receiver.connections;
    expect(await send(url, { resolve })).toMatchObject({ ok: true });

    answer = '10.0.0.7';
    const outcome = await send(url, { resolve });
    expect(outcome).toMatchObject({ ok: false, retryable: false });
    expect(outcome.error).toContain('resolves to 10.0.0.7, which is not a public address (private address');
    // The same address, no longer allowed by the operator.
    answer = '127.0.0.1';
    const closedRange = await send(url, { resolve, allow: parseAllowCidrs([]) });
    expect(closedRange).toMatchObject({ ok: false, retryable: false });
    expect(closedRange.error).toContain('not a public address (loopback address');

    expect(receiver.requests).toHaveLength(1);
    expect(receiver.connections - before).toBe(1);
  });

  it('keeps pools apart by trust roots: a pooled connection never serves a sender that does not trust the receiver', async () => {
    const url = receiver.url('/ca');
    expect(await send(url)).toMatchObject({ ok: true });
    const { ca: _ca, ...untrusting } = options;
    const outcome = await sendWebhook(
      { url, deliveryId: 'dlv_pool', body, secret },
      { ...untrusting, pools },
    );
    expect(outcome).toMatchObject({ ok: false, retryable: true });
    expect(outcome.error).toMatch(/certificate/i);
    expect(receiver.requests).toHaveLength(1);
  });

  it('closes the least recently used pool beyond its bound and pools left idle', async () => {
    await pools.close();
    pools = createWebhookPools({ maxPools: 1, idleMs: 100 });
    await send(receiver.url('/a'));
    await send(receiver.url('/b', 'hooks.earshot.test'));
    expect(pools.size).toBe(1);
    await sleep(300);
    expect(pools.size).toBe(0);
    expect(receiver.requests.map((r) => r.path)).toEqual(['/a', '/b']);
  });

  it('still sends, on a connection of its own, after the pools were closed at shutdown', async () => {
    await pools.close();
    const before = receiver.connections;
    expect(await send(receiver.url('/after-close'))).toMatchObject({ ok: true });
    expect(await send(receiver.url('/after-close'))).toMatchObject({ ok: true });
    expect(receiver.connections - before).toBe(2);
    expect(pools.size).toBe(0);
  });
});
