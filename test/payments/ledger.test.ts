import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentsProjection } from '../../projections/payments/projection.ts';
import { paymentsReport, paymentsSince } from '../../projections/payments/queries.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { paymentIdOf } from '../../src/payments/events.ts';
import { createLedger } from '../../src/payments/ledger.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { catchUp } from '../support/projections.ts';

describe('the payment ledger', () => {
  let testDb: TestDb;
  let store: ReturnType<typeof createPostgresEventStore>;
  beforeAll(async () => {
    testDb = await createTestDb();
    store = createPostgresEventStore(testDb.db);
  });
  afterAll(async () => {
    await store?.close();
    await testDb?.drop();
  });

  const facts = (nonce: string, operation = 'GET /v1/podcasts') => ({
    paymentId: paymentIdOf('eip155:1337', '0xAB', { authorization: { from: '0xPayer', nonce } }),
    payer: '0xPayer',
    operation,
    amount: '10000',
    asset: '0xab',
    network: 'eip155:1337',
  });

  it('names one stream per authorization, whatever the signature or letter case', () => {
    expect(
      paymentIdOf('eip155:1', '0xAB', { authorization: { from: '0xA', nonce: '0x1' }, signature: '0x01' }),
    ).toBe(
      paymentIdOf('eip155:1', '0xab', { authorization: { from: '0xa', nonce: '0x1' }, signature: '0x02' }),
    );
    expect(paymentIdOf('eip155:1', '0xab', { authorization: { from: '0xa', nonce: '0x1' } })).not.toBe(
      paymentIdOf('eip155:1', '0xab', { authorization: { from: '0xa', nonce: '0x2' } }),
    );
  });

  it('lets an authorization be verified once, and keeps its outcome in the read model', async () => {
    let tick = Date.now() - 30_000;
    const ledger = createLedger(store, () => {
      tick += 1000;
      return new Date(tick);
    });
    const [settled, released, failed] = [facts('0x1'), facts('0x2', 'POST /mcp'), facts('0x3')];
    expect(await ledger.verified(settled)).toBe(true);
    expect(await ledger.verified(settled)).toBe(false);
    await ledger.settled(settled, '0xtx');
    expect(await ledger.verified(released)).toBe(true);
    await ledger.released(released, 404);
    expect(await ledger.verified(failed)).toBe(true);
    await ledger.settlementFailed(failed, 'invalid_exact_evm_nonce_already_used');
    const pending = facts('0x4');
    expect(await ledger.verified(pending)).toBe(true);

    await catchUp(testDb.db, store, paymentsProjection);
    const rows = await paymentsSince(testDb.db, new Date(Date.now() - 60_000));
    expect(rows.map((r) => [r.id, r.outcome, r.transaction, r.reason])).toEqual([
      [settled.paymentId, 'settled', '0xtx', null],
      [released.paymentId, 'not_charged', null, null],
      [failed.paymentId, 'settlement_failed', null, 'invalid_exact_evm_nonce_already_used'],
      [pending.paymentId, 'verified', null, null],
    ]);
    expect(await paymentsSince(testDb.db, new Date(Date.now() + 60_000))).toEqual([]);
  });

  it('reports the settled totals of the whole window, not only of the payments listed', async () => {
    const ledger = createLedger(store, () => new Date());
    const since = new Date();
    for (const nonce of ['0xa1', '0xa2', '0xa3']) {
      const paid = facts(nonce);
      await ledger.verified(paid);
      await ledger.settled(paid, `0xtx${nonce}`);
    }
    await catchUp(testDb.db, store, paymentsProjection);
    const report = await paymentsReport(testDb.db, since, 2);
    expect(report.payments).toHaveLength(2);
    expect(report.more).toBe(true);
    expect(report.settled).toEqual([{ network: 'eip155:1337', asset: '0xab', count: 3, amount: '30000' }]);
  });
});
