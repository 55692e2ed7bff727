import { createHash } from 'node:crypto';

/**
 * The payment ledger (docs/payments.md, "Ledger"): one stream per transfer authorization, so the
 * event store's expected revision lets a signature be used for one request only.
 */
export const paymentStream = (paymentId: string) => `payment-${paymentId}`;

/** What a ledger event says about the request it paid for. */
export interface PaymentFacts {
  paymentId: string;
  payer: string;
  /** `GET /v1/podcasts/:id`, `POST /mcp`. */
  operation: string;
  /** Atomic units of the asset. */
  amount: string;
  asset: string;
  network: string;
}

/** The facilitator found the authorization valid; the request runs. */
export interface PaymentVerified {
  type: 'PaymentVerified';
  data: PaymentFacts & { verifiedAt: string };
}

/** The request succeeded and the transfer landed on chain. */
export interface PaymentSettled {
  type: 'PaymentSettled';
  data: PaymentFacts & { transaction: string; settledAt: string };
}

/** The request succeeded but the transfer did not land; the caller got 402, not the response. */
export interface PaymentSettlementFailed {
  type: 'PaymentSettlementFailed';
  data: PaymentFacts & { reason: string; failedAt: string };
}

/** The request failed (4xx/5xx), so nothing was settled. */
export interface PaymentReleased {
  type: 'PaymentReleased';
  data: PaymentFacts & { status: number; releasedAt: string };
}

export type PaymentEvent = PaymentVerified | PaymentSettled | PaymentSettlementFailed | PaymentReleased;

export const PAYMENT_EVENT_TYPES = [
  'PaymentVerified',
  'PaymentSettled',
  'PaymentSettlementFailed',
  'PaymentReleased',
] as const satisfies readonly PaymentEvent['type'][];

/**
 * One id per transfer authorization: an EIP-3009 authorization is spent by (token, payer, nonce),
 * so a replayed signature, or another signature over the same nonce, lands on the same stream.
 */
export function paymentIdOf(network: string, asset: string, payload: Record<string, unknown>): string {
  const authorization = payload.authorization as { from?: unknown; nonce?: unknown } | undefined;
  const spent =
    typeof authorization?.from === 'string' && typeof authorization.nonce === 'string'
      ? `${authorization.from}:${authorization.nonce}`.toLowerCase()
      : JSON.stringify(payload);
  return createHash('sha256').update(`${network}|${asset.toLowerCase()}|${spent}`).digest('base64url');
}
