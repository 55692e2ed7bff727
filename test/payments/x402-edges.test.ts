import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payerClient } from '../support/chain/payer.ts';
import { runCli, schemaUrl } from '../support/cli.ts';
import { paymentsHarness } from './support.ts';

type Harness = Awaited<ReturnType<typeof paymentsHarness>>;

/** The edges of pay per request: what counts as a credential, MCP batches, validation order. */
describe('x402 at its edges', () => {
  let h: Harness;
  let carol: ReturnType<typeof payerClient>;
  const CENT = 10_000n;

  beforeAll(async () => {
    h = await paymentsHarness();
    const account = h.chain.payers[0]!;
    carol = payerClient(h.chain, account);
    await h.chain.mint(account.address, 100n * CENT);
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${h.url}${path}`, { headers });
  const balance = () => h.chain.balanceOf(carol.account.address);

  it('takes any Authorization or X-API-Key header as a presented credential: 401, never 402', async () => {
    for (const headers of [
      { authorization: 'Basic YWxpY2U6c2VjcmV0' },
      { authorization: 'Bearer' },
      { 'x-api-key': '' },
    ] as Record<string, string>[]) {
      const response = await get('/v1/podcasts', headers);
      expect(response.status, JSON.stringify(headers)).toBe(401);
      expect(response.headers.get('payment-required'), JSON.stringify(headers)).toBeNull();
    }
    expect((await get('/v1/podcasts?api-key=')).status).toBe(401);
  });
});
