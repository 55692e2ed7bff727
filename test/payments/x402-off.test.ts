import Fastify from 'fastify';
import fp from 'fastify-plugin';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { Ledger } from '../../src/payments/ledger.ts';
import { x402Payments } from '../../src/payments/x402.ts';
import { type FullApp, fullApp } from '../support/app.ts';

const on = {
  EARSHOT_X402_PAY_TO: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
  EARSHOT_X402_FACILITATOR_URL: 'http://127.0.0.1:9/facilitator/',
};

describe('x402 configuration', () => {
  it('is off without EARSHOT_X402_PAY_TO', () => {
    expect(loadConfig({}).x402).toBeUndefined();
  });

  it('reads the wallet, the network (Base by default), the facilitator and a token with its domain', () => {
    expect(loadConfig(on).x402).toEqual({
      payTo: on.EARSHOT_X402_PAY_TO,
      network: 'eip155:8453',
      facilitatorUrl: 'http://127.0.0.1:9/facilitator',
    });
    const token = '0x1111111111111111111111111111111111111111';
    expect(
      loadConfig({
        ...on,
        EARSHOT_X402_ASSET: token,
        EARSHOT_X402_ASSET_NAME: 'T',
        EARSHOT_X402_ASSET_VERSION: '1',
      }).x402?.asset,
    ).toEqual({ address: token, name: 'T', version: '1', decimals: 6 });
  });

  it('refuses a bad wallet, a non-EVM network, no facilitator, or a token without its domain', () => {
    for (const [env, message] of [
      [{ ...on, EARSHOT_X402_PAY_TO: 'alice' }, /PAY_TO/],
      [{ ...on, EARSHOT_X402_NETWORK: 'solana:mainnet' }, /NETWORK/],
      [{ ...on, EARSHOT_X402_FACILITATOR_URL: '' }, /FACILITATOR_URL/],
      [{ ...on, EARSHOT_X402_ASSET: 'usdc' }, /EARSHOT_X402_ASSET/],
      [{ ...on, EARSHOT_X402_ASSET: '0x1111111111111111111111111111111111111111' }, /ASSET_NAME/],
    ] as const)
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(message);
  });
});

describe('x402 on a known network', () => {
  it("charges the network's USDC when no token is configured, and refuses to start without one", async () => {
    const base = await fullApp({
      env: {
        EARSHOT_X402_PAY_TO: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
        EARSHOT_X402_FACILITATOR_URL: 'http://127.0.0.1:9',
      },
    });
    try {
      const discovery = (await base.app.inject({ method: 'GET', url: '/.well-known/x402' })).json() as {
        items: { accepts: { asset: string; amount: string; extra: unknown }[] }[];
      };
      expect(discovery.items[0]!.accepts[0]).toMatchObject({
        asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
        amount: '10000',
        extra: { name: 'USD Coin', version: '2' },
      });
      // The facilitator (port 9) cannot be reached: 503, a problem that says what to do.
      const down = await base.app.inject({ method: 'GET', url: '/v1/podcasts' });
      expect(down.statusCode).toBe(503);
      expect(down.headers['content-type']).toContain('application/problem+json');
      expect(down.json()).toMatchObject({
        error_code: 'payment_unavailable',
        resolve: { action: 'retry' },
      });
    } finally {
      await base.close();
    }
    const bare = Fastify();
    await bare.register(fp(async () => {}, { name: 'earshot-auth' }));
    const config = loadConfig({ ...on, EARSHOT_X402_NETWORK: 'eip155:999999' }).x402!;
    await expect(
      bare
        .register(x402Payments({ config, publicBaseUrl: 'http://x', mcpChallenge: '', ledger: {} as Ledger }))
        .ready(),
    ).rejects.toThrow(/No known EIP-3009 stablecoin on eip155:999999/);
    await bare.close();
  });
});

describe('with x402 off', () => {
  let full: FullApp;
  beforeAll(async () => {
    full = await fullApp();
  });
  afterAll(async () => {
    await full?.close();
  });

  it('answers keyless calls 401 as before, and offers no payment terms', async () => {
    const keyless = await full.app.inject({ method: 'GET', url: '/v1/podcasts' });
    expect(keyless.statusCode).toBe(401);
    expect(keyless.headers['payment-required']).toBeUndefined();
    expect((await full.app.inject({ method: 'GET', url: '/.well-known/x402' })).statusCode).toBe(404);
    expect(
      JSON.stringify((await full.app.inject({ method: 'GET', url: '/openapi.json' })).json()),
    ).not.toContain('x-payment-info');
    const mcp = await full.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        host: 'localhost',
      },
      payload: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'earshot_catalog', arguments: {} },
      },
    });
    expect(mcp.statusCode).toBe(401);
    expect(mcp.headers['www-authenticate']).toContain('resource_metadata=');
  });
});
