import pino from 'pino';
import { buildCapabilities } from '../../src/composition.ts';
import { loadConfig } from '../../src/config.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { listenEarly } from '../../src/http/early-server.ts';
import type { Runtime } from '../../src/runtime.ts';
import { startFacilitator } from '../support/chain/facilitator.ts';
import { startLocalChain } from '../support/chain/local-chain.ts';
import { payerClient } from '../support/chain/payer.ts';
import { createTestDb } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';

/**
 * earshot listening on loopback with x402 on, paid in a token on a local chain through a
 * facilitator running the reference verify/settle logic (test/support/chain); `env` adds settings.
 */
export async function paymentsHarness(env: Record<string, string> = {}) {
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
      ...env,
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

/** 0.01 in the local chain's 6-decimal token: the price of a billable call. */
export const CENT = 10_000n;

/** The harness with one payer (the chain's first account, holding 1.00) and requests from it. */
export async function paidHarness(env: Record<string, string> = {}) {
  const h = await paymentsHarness(env);
  const account = h.chain.payers[0]!;
  const payer = payerClient(h.chain, account);
  await h.chain.mint(account.address, 100n * CENT);
  return {
    ...h,
    payer,
    get: (path: string, headers: Record<string, string> = {}) => fetch(`${h.url}${path}`, { headers }),
    balance: () => h.chain.balanceOf(payer.account.address),
  };
}
