import { WrongExpectedRevisionError } from '../errors.ts';
import type { EventStore } from '../eventstore/port.ts';
import { metrics } from '../observability/metrics.ts';
import { type PaymentFacts as Facts, type PaymentEvent, paymentStream } from './events.ts';

/** Appends the ledger events and counts them on /metrics (earshot_payments_total by outcome). */
export function createLedger(store: EventStore, now: () => Date) {
  const at = () => now().toISOString();
  const append = (event: PaymentEvent, expectedRevision: 'no_stream' | 'stream_exists') =>
    store.append(paymentStream(event.data.paymentId), [event], { expectedRevision });
  return {
    /** Records a verified payment; false when its authorization was presented before (a replay). */
    async verified(facts: Facts): Promise<boolean> {
      try {
        await append({ type: 'PaymentVerified', data: { ...facts, verifiedAt: at() } }, 'no_stream');
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        metrics.payments.inc({ outcome: 'replayed' });
        return false;
      }
      metrics.payments.inc({ outcome: 'verified' });
      return true;
    },
    async settled(facts: Facts, transaction: string) {
      await append(
        { type: 'PaymentSettled', data: { ...facts, transaction, settledAt: at() } },
        'stream_exists',
      );
      metrics.payments.inc({ outcome: 'settled' });
    },
    async settlementFailed(facts: Facts, reason: string) {
      await append(
        { type: 'PaymentSettlementFailed', data: { ...facts, reason, failedAt: at() } },
        'stream_exists',
      );
      metrics.payments.inc({ outcome: 'settlement_failed' });
    },
    async released(facts: Facts, status: number) {
      await append(
        { type: 'PaymentReleased', data: { ...facts, status, releasedAt: at() } },
        'stream_exists',
      );
      metrics.payments.inc({ outcome: 'not_charged' });
    },
    /** A presented payment the facilitator (or the terms) refused; no event, only the count. */
    refused() {
      metrics.payments.inc({ outcome: 'refused' });
    },
  };
}

export type Ledger = ReturnType<typeof createLedger>;
