import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { type FullApp, fullApp } from '../support/app.ts';

describe('x402 configuration', () => {
  const on = {
    EARSHOT_X402_PAY_TO: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
    EARSHOT_X402_FACILITATOR_URL: 'http://127.0.0.1:9/facilitator/',
  };

  it('is off without EARSHOT_X402_PAY_TO', () => {
    expect(loadConfig({}).x402).toBeUndefined();
  });

  it('defaults to USDC on Base, whose EIP-712 domain it knows', () => {
    expect(loadConfig(on).x402).toEqual({
      payTo: on.EARSHOT_X402_PAY_TO,
      network: 'eip155:8453',
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      assetName: 'USD Coin',
      assetVersion: '2',
      assetDecimals: 6,
      facilitatorUrl: 'http://127.0.0.1:9/facilitator',
    });
  });

  it('refuses a bad wallet, a non-EVM network, no facilitator, or an unknown token without its domain', () => {
    const token = '0x1111111111111111111111111111111111111111';
    for (const [env, message] of [
      [{ ...on, EARSHOT_X402_PAY_TO: 'alice' }, /PAY_TO/],
      [{ ...on, EARSHOT_X402_NETWORK: 'solana:mainnet' }, /NETWORK/],
      [{ ...on, EARSHOT_X402_FACILITATOR_URL: '' }, /FACILITATOR_URL/],
      [{ ...on, EARSHOT_X402_NETWORK: 'eip155:1337' }, /EARSHOT_X402_ASSET/],
      [{ ...on, EARSHOT_X402_ASSET: token }, /ASSET_NAME/],
    ] as const)
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(message);
    expect(
      loadConfig({
        ...on,
        EARSHOT_X402_ASSET: token,
        EARSHOT_X402_ASSET_NAME: 'T',
        EARSHOT_X402_ASSET_VERSION: '1',
      }).x402,
    ).toMatchObject({ asset: token, assetName: 'T', assetVersion: '1', assetDecimals: 6 });
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
