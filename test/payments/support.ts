import { x402Client, x402HTTPClient } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import pino from 'pino';
import type { Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { buildCapabilities } from '../../src/composition.ts';
import { loadConfig } from '../../src/config.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { listenEarly } from '../../src/http/early-server.ts';
import type { Runtime } from '../../src/runtime.ts';
import { startFacilitator } from '../support/chain/facilitator.ts';
import { type LocalChain, startLocalChain } from '../support/chain/local-chain.ts';
import { createTestDb } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';

/**
 * earshot listening on loopback with x402 on, paid in a token on a local chain through a
 * facilitator running the reference verify/settle logic (test/support/chain).
 */
export async function paymentsHarness() {
  const chain = await startLocalChain();
  const facilitator = await startFacilitator(chain);
  const testDb = await createTestDb();
  const { db } = testDb;
  const store = createPostgresEventStore(db, { pollIntervalMs: 50 });
  const early = await listenEarly(0, '127.0.0.1');
  const runtime: Runtime = {
    config: loadConfig({
      PUBLIC_BASE_URL: early.url,
      DATA_DIR: '/tmp/earshot-payments-test',
      EARSHOT_RATE_LIMIT_PER_IP: '0',
      EARSHOT_RATE_LIMIT_PER_KEY: '0',
      ...chain.env(facilitator.url),
    }),
    db,
    store,
    secretKey: Buffer.alloc(32, 9),
    log: pino({ level: 'silent' }),
    now: () => new Date(),
  };
  const app = await buildHttpApp({
    db,
    cursorKey: Buffer.alloc(32, 8),
    routes: buildCapabilities(runtime).flatMap((c) => c.routes ?? []),
    rateLimit: runtime.config.rateLimit,
    server: early,
  });
  await app.ready();
  const tenant = await createTenant(db, 'TEAM');
  return {
    url: early.url,
    app,
    db,
    store,
    schema: testDb.schema,
    chain,
    facilitator,
    tenant,
    async close() {
      await app.close();
      await store.close();
      await testDb.drop();
      await facilitator.close();
      await chain.close();
    },
  };
}

/** A wallet that pays with the reference x402 client (@x402/core/client, @x402/evm). */
export function payerClient(chain: LocalChain, account: PrivateKeyAccount) {
  const client = new x402Client().setSpendControls({
    allowedAssets: [{ network: chain.network, asset: chain.asset }],
  });
  registerExactEvmScheme(client, { signer: account });
  const http = new x402HTTPClient(client);
  return {
    account,
    required(response: Response, body: unknown): PaymentRequired {
      return http.getPaymentRequiredResponse((name) => response.headers.get(name), body);
    },
    async sign(required: PaymentRequired): Promise<Record<string, string>> {
      return http.encodePaymentSignatureHeader(await client.createPaymentPayload(required));
    },
    encode(payload: PaymentPayload) {
      return http.encodePaymentSignatureHeader(payload);
    },
    settlement(response: Response) {
      return http.getPaymentSettleResponse((name) => response.headers.get(name));
    },
  };
}

/** An EIP-3009 authorization signed by hand, to present what the reference client never would. */
export async function handSigned(
  account: PrivateKeyAccount,
  accepted: PaymentRequirements,
  overrides: { value?: string; validBefore?: bigint } = {},
): Promise<PaymentPayload> {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const authorization = {
    from: account.address,
    to: accepted.payTo as Hex,
    value: overrides.value ?? accepted.amount,
    validAfter: (now - 600n).toString(),
    validBefore: (overrides.validBefore ?? now + 60n).toString(),
    nonce: `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}` as Hex,
  };
  const signature = await account.signTypedData({
    domain: {
      name: String(accepted.extra.name),
      version: String(accepted.extra.version),
      chainId: Number(accepted.network.split(':')[1]),
      verifyingContract: accepted.asset as Hex,
    },
    types: {
      TransferWithAuthorization: [
        { name: 'from', type: 'address' },
        { name: 'to', type: 'address' },
        { name: 'value', type: 'uint256' },
        { name: 'validAfter', type: 'uint256' },
        { name: 'validBefore', type: 'uint256' },
        { name: 'nonce', type: 'bytes32' },
      ],
    },
    primaryType: 'TransferWithAuthorization',
    message: {
      ...authorization,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
    },
  });
  return { x402Version: 2, accepted, payload: { authorization, signature } };
}
