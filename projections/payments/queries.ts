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
