import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentsProjection } from '../../projections/payments/projection.ts';
import { paymentsSince } from '../../projections/payments/queries.ts';
import { mcpPost } from '../agents/support.ts';
import { handSigned, payerClient } from '../support/chain/payer.ts';
import { runCli, schemaUrl } from '../support/cli.ts';
import { catchUp } from '../support/projections.ts';
import { CENT, paymentsHarness } from './support.ts';

type Harness = Awaited<ReturnType<typeof paymentsHarness>>;

/**
 * x402 end to end on a real local chain (ganache, an EIP-3009 token compiled from source), with
 * the reference facilitator verifying and settling, and the reference client signing.
 */
describe('pay per request with x402 on a local chain', () => {
  let h: Harness;
  let alice: ReturnType<typeof payerClient>;
  let bob: ReturnType<typeof payerClient>;
  let broke: ReturnType<typeof payerClient>;

  beforeAll(async () => {
    h = await paymentsHarness();
    const [a, b, c] = h.chain.payers;
    alice = payerClient(h.chain, a!);
    bob = payerClient(h.chain, b!);
    broke = payerClient(h.chain, c!);
    await h.chain.mint(a!.address, 100n * CENT);
    await h.chain.mint(b!.address, 100n * CENT);
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${h.url}${path}`, { headers });
  const balances = async () => ({
    alice: await h.chain.balanceOf(alice.account.address),
    bob: await h.chain.balanceOf(bob.account.address),
    recipient: await h.chain.balanceOf(h.chain.recipient.address),
  });
  async function challenge(path: string) {
    const response = await get(path);
    const body = (await response.json()) as Record<string, unknown>;
    return { response, body, required: alice.required(response, body) };
  }
  const refusal = (response: Response) =>
    decodePaymentRequiredHeader(response.headers.get('payment-required')!).error;

  it('answers a keyless call of a billable route with 402, the terms and a problem', async () => {
    const { response, body, required } = await challenge('/v1/podcasts');
    expect(response.status).toBe(402);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    expect(body).toMatchObject({ status: 402, error_code: 'payment_required' });
    expect(body.resolve).toMatchObject({ url: `${h.url}/.well-known/x402` });
    expect(required.x402Version).toBe(2);
    expect(required.accepts).toEqual([
      expect.objectContaining({
        scheme: 'exact',
        network: h.chain.network,
        asset: h.chain.asset,
        amount: CENT.toString(),
        payTo: h.chain.recipient.address,
      }),
    ]);
  });

  it('serves a paid call once, moves exactly the price, and refuses the same signature again', async () => {
    const before = await balances();
    const { required } = await challenge('/v1/podcasts');
    const signature = await alice.sign(required);
    // The same signature twice at once: the ledger lets one request through, refuses the other.
    const both = await Promise.all([get('/v1/podcasts', signature), get('/v1/podcasts', signature)]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 402]);
    const paid = both.find((r) => r.status === 200)!;
    const receipt = alice.settlement(paid);
    expect(receipt).toMatchObject({ success: true, network: h.chain.network });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const after = await balances();
    expect(after.alice).toBe(before.alice - CENT);
    expect(after.recipient).toBe(before.recipient + CENT);

    // Later, the spent authorization is refused by the facilitator's on-chain check too.
    const replay = await get('/v1/podcasts', signature);
    expect(replay.status).toBe(402);
    expect(refusal(replay)).toMatch(/nonce|used/i);
    expect(((await replay.json()) as { error_code: string }).error_code).toBe('payment_required');
    expect(replay.headers.get('payment-response')).toBeNull();
    expect(await balances()).toEqual(after);
  });

  it('does not charge for a request that fails', async () => {
    const before = await balances();
    const { required } = await challenge('/v1/podcasts/pod_missing');
    const failed = await get('/v1/podcasts/pod_missing', await alice.sign(required));
    expect(failed.status).toBe(404);
    expect(failed.headers.get('payment-response')).toBeNull();
    expect(await balances()).toEqual(before);
  });

  it('refuses a wrong amount, a wrong network, an expired authorization and an empty wallet', async () => {
    const before = await balances();
    const { required } = await challenge('/v1/podcasts');
    const accepted = required.accepts[0]!;
    const cases: [string, Record<string, string>][] = [
      ['amount', alice.encode(await handSigned(alice.account, accepted, { value: (CENT - 1n).toString() }))],
      [
        'terms',
        await alice.sign({
          ...required,
          accepts: [{ ...accepted, amount: (CENT / 2n).toString() }],
        } as PaymentRequired),
      ],
      ['network', alice.encode(await handSigned(alice.account, { ...accepted, network: 'eip155:8453' }))],
      [
        'expired',
        alice.encode(
          await handSigned(alice.account, accepted, {
            validBefore: BigInt(Math.floor(Date.now() / 1000) - 5),
          }),
        ),
      ],
      [
        'not yet valid',
        alice.encode(
          await handSigned(alice.account, accepted, {
            validAfter: BigInt(Math.floor(Date.now() / 1000) + 600),
          }),
        ),
      ],
      ['balance', await broke.sign(required)],
    ];
    const reasons: Record<string, string | undefined> = {};
    for (const [name, headers] of cases) {
      const response = await get('/v1/podcasts', headers);
      expect(response.status, name).toBe(402);
      expect(response.headers.get('payment-response'), name).toBeNull();
      reasons[name] = refusal(response);
    }
    expect(reasons.amount).toMatch(/value/i);
    expect(reasons.terms).toMatch(/no matching/i);
    expect(reasons.network).toMatch(/no matching/i);
    expect(reasons.expired).toMatch(/valid_before|expired/i);
    expect(reasons['not yet valid']).toMatch(/valid_after/i);
    expect(reasons.balance).toMatch(/insufficient/i);
    expect(await balances()).toEqual(before);
  });

  it('charges the leaderboard its own price, premium plan or not', async () => {
    const before = await balances();
    const { required } = await challenge('/v1/podcasts/advertising/leaderboard');
    expect(required.accepts[0]!.amount).toBe((4n * CENT).toString());
    const paid = await get('/v1/podcasts/advertising/leaderboard', await bob.sign(required));
    expect(paid.status).toBe(200);
    expect((await balances()).bob).toBe(before.bob - 4n * CENT);
  });

  it('never challenges a presented credential, valid or not', async () => {
    const keyed = await get('/v1/podcasts', { 'x-api-key': h.tenant.key });
    expect(keyed.status).toBe(200);
    expect(keyed.headers.get('payment-required')).toBeNull();
    const invalid: Record<string, string>[] = [{ 'x-api-key': 'ek_nope' }, { authorization: 'Bearer nope' }];
    for (const headers of invalid) {
      const response = await get('/v1/podcasts', headers);
      expect(response.status).toBe(401);
      expect(response.headers.get('payment-required')).toBeNull();
    }
    const query = await get('/v1/podcasts?api-key=nope');
    expect(query.status).toBe(401);
  });

  it('lists the payable operations and their terms at /.well-known/x402', async () => {
    const response = await get('/.well-known/x402');
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      version: number;
      resources: string[];
      items: { resource: string; method: string; price: { amount: string }; accepts: { amount: string }[] }[];
    };
    expect(body.version).toBe(1);
    expect(body.resources).toEqual(
      expect.arrayContaining([
        `${h.url}/v1/podcasts`,
        `${h.url}/v1/podcasts/advertising/leaderboard`,
        `${h.url}/mcp`,
      ]),
    );
    const leaderboard = body.items.find((i) => i.resource.endsWith('/leaderboard'))!;
    expect(leaderboard.price).toEqual({ mode: 'fixed', currency: 'USD', amount: '0.04' });
    expect(leaderboard.accepts[0]!.amount).toBe((4n * CENT).toString());
    expect(body.resources.some((r) => /alerts|connections|deliver|ingest|embed/.test(r))).toBe(false);
  });

  it('walks /openapi.json: payable operations carry x-payment-info and challenge; no other answers 402', async () => {
    const spec = (await (await get('/openapi.json')).json()) as {
      paths: Record<
        string,
        Record<string, { tags?: string[]; 'x-payment-info'?: { price: { amount: string } } }>
      >;
    };
    let payable = 0;
    let free = 0;
    for (const [path, operations] of Object.entries(spec.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const url = `${h.url}${path.replace(/\{[^}]+\}/g, 'x')}`;
        const init = (headers: Record<string, string>): RequestInit => ({
          method: method.toUpperCase(),
          headers: {
            ...headers,
            ...(method === 'get' || method === 'delete' ? {} : { 'content-type': 'application/json' }),
          },
          ...(method === 'get' || method === 'delete' ? {} : { body: '{}' }),
        });
        const info = operation['x-payment-info'];
        const keyless = await fetch(url, init({}));
        const keyed = await fetch(url, init({ 'x-api-key': h.tenant.key }));
        const keyedBody = (await keyed.json().catch(() => ({}))) as { error_code?: string };
        expect(keyed.headers.get('payment-required'), `${method} ${path} keyed`).toBeNull();
        expect(keyedBody.error_code, `${method} ${path} keyed`).not.toBe('payment_required');
        if (info) {
          payable++;
          expect(method, path).toBe('get');
          expect(info).toEqual({
            price: {
              mode: 'fixed',
              currency: 'USD',
              amount: path.endsWith('/leaderboard') ? '0.04' : '0.01',
            },
            protocols: ['x402'],
          });
          expect(
            operation.tags?.some((t) => /alerts|chat|deliveries|webhooks|ingestion/.test(t)),
            path,
          ).toBe(false);
          expect(keyless.status, `${method} ${path}`).toBe(402);
          expect(keyless.headers.get('payment-required'), path).not.toBeNull();
        } else {
          free++;
          expect(keyless.status, `${method} ${path}`).not.toBe(402);
          expect(keyless.headers.get('payment-required'), path).toBeNull();
        }
      }
    }
    expect(payable).toBeGreaterThan(20);
    expect(free).toBeGreaterThan(10);
  });

  describe('MCP', () => {
    const rpc = (body: unknown, headers: Record<string, string> = {}) =>
      mcpPost(`${h.url}/mcp`, body, headers);
    const call = (name: string, args: Record<string, unknown> = {}) => ({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name, arguments: args },
    });

    it('serves initialize and tools/list free to a keyless client', async () => {
      const init = await rpc({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      });
      expect(init.status).toBe(200);
      const list = await rpc({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      expect(list.status).toBe(200);
      const tools = ((await list.json()) as { result: { tools: { name: string }[] } }).result.tools;
      expect(tools.map((t) => t.name)).toContain('earshot_podcast_get');
    });

    it('answers a keyless tool call with both challenges, then serves it paid', async () => {
      const before = await balances();
      const keyless = await rpc(call('earshot_catalog'));
      expect(keyless.status).toBe(402);
      expect(keyless.headers.get('www-authenticate')).toContain('resource_metadata=');
      const body = await keyless.json();
      const required = alice.required(keyless, body);
      expect(required.accepts[0]!.amount).toBe(CENT.toString());
      const paid = await rpc(call('earshot_catalog'), await alice.sign(required));
      expect(paid.status).toBe(200);
      expect(alice.settlement(paid).success).toBe(true);
      expect(((await paid.json()) as { result: { isError?: boolean } }).result.isError).toBeUndefined();
      expect((await balances()).alice).toBe(before.alice - CENT);
    });

    it('does not charge a tool call that fails, nor let a paid call reach project-scoped tools', async () => {
      const before = await balances();
      for (const request of [call('earshot_no_such_tool'), call('earshot_alert_list')]) {
        const keyless = await rpc(request);
        const required = alice.required(keyless, await keyless.json());
        const answer = await rpc(request, await alice.sign(required));
        expect(answer.status).toBe(200);
        expect(((await answer.json()) as { result: { isError?: boolean } }).result.isError).toBe(true);
        expect(answer.headers.get('payment-response')).toBeNull();
      }
      expect(await balances()).toEqual(before);
    });
  });

  it('records every verified and settled payment, lists them for the operator and counts them', async () => {
    await catchUp(h.db, h.store, paymentsProjection);
    const rows = await paymentsSince(h.db, new Date(Date.now() - 3_600_000));
    const outcomes = rows.map((r) => r.outcome);
    expect(outcomes.filter((o) => o === 'settled')).toHaveLength(3);
    expect(outcomes.filter((o) => o === 'not_charged')).toHaveLength(3);
    const settled = rows.filter((r) => r.outcome === 'settled');
    expect(settled.map((r) => r.operation).sort()).toEqual([
      'GET /v1/podcasts',
      'GET /v1/podcasts/advertising/leaderboard',
      'POST /mcp',
    ]);
    for (const row of settled) expect(row.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(settled.find((r) => r.operation.endsWith('leaderboard'))).toMatchObject({
      payer: h.chain.payers[1]!.address,
      amount: (4n * CENT).toString(),
    });

    const cli = await runCli(
      ['payments', 'list', '--since', new Date(Date.now() - 3_600_000).toISOString(), '--json'],
      {
        DATABASE_URL: schemaUrl(h.schema),
        DATA_DIR: '/tmp/earshot-payments-test',
      },
    );
    expect(cli.stderr).toBe('');
    const listed = JSON.parse(cli.stdout) as {
      payments: unknown[];
      more: boolean;
      settled: { network: string; asset: string; count: number; amount: string }[];
    };
    expect(listed.payments).toHaveLength(rows.length);
    expect(listed.more).toBe(false);
    expect(listed.settled).toEqual([
      { network: h.chain.network, asset: h.chain.asset, count: 3, amount: (6n * CENT).toString() },
    ]);

    const metrics = await (await get('/metrics')).text();
    expect(metrics).toMatch(/earshot_payments_total\{outcome="settled"\} [3-9]/);
    expect(metrics).toMatch(/earshot_payments_total\{outcome="refused"\} [1-9]/);
    expect(metrics).toMatch(/earshot_payments_total\{outcome="replayed"\} [1-9]/);
  });
});
