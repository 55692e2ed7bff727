import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpPost } from '../agents/support.ts';
import { payerClient } from '../support/chain/payer.ts';
import { runCli, schemaUrl } from '../support/cli.ts';
import { CENT, paidHarness } from './support.ts';

/** The edges of pay per request: what counts as a credential, MCP batches, validation order. */
describe('x402 at its edges', () => {
  let h: Awaited<ReturnType<typeof paidHarness>>;

  beforeAll(async () => {
    h = await paidHarness();
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  it('takes any Authorization or X-API-Key header as a presented credential: 401, never 402', async () => {
    for (const headers of [
      { authorization: 'Basic YWxpY2U6c2VjcmV0' },
      { authorization: 'Bearer' },
      { 'x-api-key': '' },
    ] as Record<string, string>[]) {
      const response = await h.get('/v1/podcasts', headers);
      expect(response.status, JSON.stringify(headers)).toBe(401);
      expect(response.headers.get('payment-required'), JSON.stringify(headers)).toBeNull();
    }
    expect((await h.get('/v1/podcasts?api-key=')).status).toBe(401);
  });

  it('refuses a malformed payment signature with 402, not as a server fault', async () => {
    const garbage = [
      'not base64 at all!',
      Buffer.from('{"x402Version":2').toString('base64'),
      Buffer.from('{"x402Version":2,"payload":{}}').toString('base64'),
      Buffer.from('[]').toString('base64'),
    ];
    const keyless = await h.get('/v1/podcasts');
    const accepted = h.payer.required(keyless, await keyless.json()).accepts[0];
    for (const payload of [{}, { authorization: {}, signature: '0x' }, { authorization: 'x' }])
      garbage.push(Buffer.from(JSON.stringify({ x402Version: 2, accepted, payload })).toString('base64'));
    for (const signature of garbage) {
      const response = await h.get('/v1/podcasts', { 'payment-signature': signature });
      expect(response.status, signature).toBe(402);
      expect(((await response.json()) as { error_code: string }).error_code).toBe('payment_required');
      expect(response.headers.get('payment-required'), signature).not.toBeNull();
    }
  });

  it('never offers payment for HEAD or OPTIONS of a billable read', async () => {
    for (const method of ['HEAD', 'OPTIONS']) {
      const response = await fetch(`${h.url}/v1/podcasts`, { method });
      expect(response.status, method).not.toBe(402);
      expect(response.status, method).toBeLessThan(500);
      expect(response.headers.get('payment-required'), method).toBeNull();
    }
  });

  it('challenges before validating, and does not charge a paid request that fails validation', async () => {
    const before = await h.balance();
    const keyless = await h.get('/v1/podcasts?limit=0');
    expect(keyless.status).toBe(402);
    const required = h.payer.required(keyless, await keyless.json());
    const paid = await h.get('/v1/podcasts?limit=0', await h.payer.sign(required));
    expect(paid.status).toBe(400);
    expect(paid.headers.get('payment-response')).toBeNull();
    expect(await h.balance()).toBe(before);
  });

  it('answers 402, never the data, when the transfer cannot be settled after the request ran', async () => {
    // Two authorizations from a wallet that holds one price: both verify, at most one can settle.
    const dave = payerClient(h.chain, h.chain.payers[1]!);
    await h.chain.mint(dave.account.address, CENT);
    const sign = async (path: string) => {
      const keyless = await h.get(path);
      return dave.sign(dave.required(keyless, await keyless.json()));
    };
    const [first, second] = [await sign('/v1/podcasts'), await sign('/v1/podcasts?limit=2')];
    const answers = await Promise.all([h.get('/v1/podcasts', first), h.get('/v1/podcasts?limit=2', second)]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 402]);
    const refused = answers.find((r) => r.status === 402)!;
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    const body = (await refused.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ error_code: 'payment_required', resolve: { action: 'pay' } });
    expect(body.data).toBeUndefined();
    expect(await h.chain.balanceOf(dave.account.address)).toBe(0n);
  });

  it('answers 503 payment_unavailable, not a refusal, when the verification answer is lost', async () => {
    const keyless = await h.get('/v1/podcasts');
    const signature = await h.payer.sign(h.payer.required(keyless, await keyless.json()));
    h.facilitator.faults.loseVerifyAnswer = true;
    try {
      const lost = await h.get('/v1/podcasts', signature);
      expect(lost.status).toBe(503);
      expect(((await lost.json()) as { error_code: string }).error_code).toBe('payment_unavailable');
    } finally {
      h.facilitator.faults.loseVerifyAnswer = false;
    }
  });

  it('withholds the response and says the outcome is unknown when the settlement answer is lost', async () => {
    const before = await h.balance();
    const keyless = await h.get('/v1/podcasts');
    const signature = await h.payer.sign(h.payer.required(keyless, await keyless.json()));
    h.facilitator.faults.loseSettleAnswer = true;
    try {
      const lost = await h.get('/v1/podcasts', signature);
      expect(lost.status).toBe(402);
      const body = (await lost.json()) as Record<string, unknown>;
      expect(body.detail).toMatch(/unknown/);
      expect(body.data).toBeUndefined();
    } finally {
      h.facilitator.faults.loseSettleAnswer = false;
    }
    // The facilitator did submit the transfer: the caller paid, and was not told otherwise.
    expect(await h.balance()).toBe(before - CENT);
  });

  describe('MCP', () => {
    const rpc = (body: unknown, headers: Record<string, string> = {}) =>
      mcpPost(`${h.url}/mcp`, body, headers);
    const call = (id: number, name: string) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name, arguments: {} },
    });

    it('charges a batch whose billable call succeeded, even when another call in it failed', async () => {
      const before = await h.balance();
      const batch = [call(1, 'earshot_catalog'), call(2, 'earshot_no_such_tool')];
      const keyless = await rpc(batch);
      expect(keyless.status).toBe(402);
      const required = h.payer.required(keyless, await keyless.json());
      const paid = await rpc(batch, await h.payer.sign(required));
      expect(paid.status).toBe(200);
      const answers = (await paid.json()) as {
        id: number;
        result?: { isError?: boolean };
      }[];
      expect(answers.find((a) => a.id === 1)?.result?.isError).toBeUndefined();
      expect(h.payer.settlement(paid).success).toBe(true);
      expect(await h.balance()).toBe(before - CENT);
    });

    it('withholds a paid tool result whose settlement fails, answering the 402 problem instead', async () => {
      const request = call(3, 'earshot_catalog');
      const keyless = await rpc(request);
      const signature = await h.payer.sign(h.payer.required(keyless, await keyless.json()));
      h.facilitator.faults.loseSettleAnswer = true;
      try {
        const lost = await rpc(request, signature);
        expect(lost.status).toBe(402);
        expect(lost.headers.get('content-type')).toContain('application/problem+json');
        const body = (await lost.json()) as Record<string, unknown>;
        expect(body).toMatchObject({ error_code: 'payment_required' });
        expect(body.result).toBeUndefined();
      } finally {
        h.facilitator.faults.loseSettleAnswer = false;
      }
    });

    it('serves a tools/call without an id (a notification, which gets no answer) free', async () => {
      const { id: _, ...notification } = call(1, 'earshot_catalog');
      const response = await rpc(notification);
      expect(response.status).toBe(202);
      expect(response.headers.get('payment-required')).toBeNull();
    });
  });

  it('refuses a --since that is not an ISO 8601 date', async () => {
    const env = {
      DATABASE_URL: schemaUrl(h.schema),
      DATA_DIR: '/tmp/earshot-payments-test',
    };
    for (const since of ['1', 'March 7', '2026-13-01']) {
      const cli = await runCli(['payments', 'list', '--since', since, '--json'], env);
      expect(cli.code, since).not.toBe(0);
      expect(cli.stdout + cli.stderr, since).toMatch(/--since/);
    }
    const ok = await runCli(['payments', 'list', '--since', '2026-01-01', '--json'], env);
    expect(ok.code).toBe(0);
  });
});
