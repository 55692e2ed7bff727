import type { Queryable } from '../../src/db/db.ts';

export interface PaymentRow {
  id: string;
  payer: string;
  operation: string;
  amount: string;
  asset: string;
  network: string;
  outcome: 'verified' | 'settled' | 'settlement_failed' | 'not_charged';
  transaction: string | null;
  reason: string | null;
  verified_at: Date;
  updated_at: Date;
}

/** Payments verified at or after `since`, oldest first. */
export async function paymentsSince(db: Queryable, since: Date, limit = 1000): Promise<PaymentRow[]> {
  const { rows } = await db.query<PaymentRow>(
    `select id, payer, operation, amount::text as amount, asset, network, outcome, transaction, reason,
            verified_at, updated_at
       from payments where verified_at >= $1::timestamptz order by verified_at, id limit $2::int`,
    [since, limit],
  );
  return rows;
}

export interface SettledTotal {
  network: string;
  asset: string;
  count: number;
  /** Atomic units of the asset. */
  amount: string;
}

/**
 * The operator's report (`earshot payments list`): up to `limit` payments verified at or after
 * `since`, whether more exist, and the settled totals of the whole window per network and token.
 */
export async function paymentsReport(db: Queryable, since: Date, limit = 1000) {
  const rows = await paymentsSince(db, since, limit + 1);
  const { rows: settled } = await db.query<SettledTotal>(
    `select network, asset, count(*)::int as count, sum(amount)::text as amount
       from payments where verified_at >= $1::timestamptz and outcome = 'settled'
      group by network, asset order by network, asset`,
    [since],
  );
  return { payments: rows.slice(0, limit), more: rows.length > limit, settled };
}
