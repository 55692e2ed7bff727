import type { Queryable } from '../../src/db/db.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import { PAYMENT_EVENT_TYPES, type PaymentEvent } from '../../src/payments/events.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';

const OUTCOME: Record<PaymentEvent['type'], string> = {
  PaymentVerified: 'verified',
  PaymentSettled: 'settled',
  PaymentSettlementFailed: 'settlement_failed',
  PaymentReleased: 'not_charged',
};

function row(event: PaymentEvent) {
  const { data } = event;
  const at =
    event.type === 'PaymentVerified'
      ? event.data.verifiedAt
      : event.type === 'PaymentSettled'
        ? event.data.settledAt
        : event.type === 'PaymentSettlementFailed'
          ? event.data.failedAt
          : event.data.releasedAt;
  return {
    id: data.paymentId,
    payer: data.payer,
    operation: data.operation,
    amount: data.amount,
    asset: data.asset,
    network: data.network,
    outcome: OUTCOME[event.type],
    transaction: event.type === 'PaymentSettled' ? event.data.transaction : null,
    reason: event.type === 'PaymentSettlementFailed' ? event.data.reason : null,
    at,
  };
}

/** The payment ledger, one row per authorization (docs/payments.md, "Ledger"); the outcome only moves on from verified. */
export const paymentsProjection: Projection = {
  name: 'payments',
  eventTypes: PAYMENT_EVENT_TYPES,
  async apply(tx: Queryable, events: readonly RecordedEvent[]) {
    // One row per payment per batch: its verification and outcome often arrive together.
    const folded = new Map<string, ReturnType<typeof row> & { first: string }>();
    for (const event of events) {
      const next = row(event as unknown as PaymentEvent);
      const seen = folded.get(next.id);
      folded.set(
        next.id,
        seen
          ? {
              ...seen,
              outcome: next.outcome === 'verified' ? seen.outcome : next.outcome,
              transaction: next.transaction ?? seen.transaction,
              reason: next.reason ?? seen.reason,
              at: next.at,
            }
          : { ...next, first: next.at },
      );
    }
    const rows = [...folded.values()];
    if (rows.length === 0) return;
    await tx.query(
      `insert into payments as p (id, payer, operation, amount, asset, network, outcome, transaction, reason,
              verified_at, updated_at)
       select r.id, r.payer, r.operation, r.amount::numeric, r.asset, r.network, r.outcome, r.transaction,
              r.reason, r.first, r.at
         from jsonb_to_recordset($1::jsonb) as r(id text, payer text, operation text, amount text,
              asset text, network text, outcome text, transaction text, reason text, first timestamptz,
              at timestamptz)
       on conflict (id) do update set
              outcome = case when excluded.outcome = 'verified' then p.outcome else excluded.outcome end,
              transaction = coalesce(excluded.transaction, p.transaction),
              reason = coalesce(excluded.reason, p.reason),
              updated_at = greatest(p.updated_at, excluded.updated_at)`,
      [JSON.stringify(rows)],
    );
  },
  async reset(tx: Queryable) {
    await tx.query('delete from payments');
  },
};
