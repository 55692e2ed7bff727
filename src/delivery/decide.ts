import { storableJson } from '../storable-text.ts';
import type { AttemptRecord, Delivery, DeliveryEvent, RecipientResult } from './delivery.ts';
import { deliveryEventId } from './ids.ts';
import { type RetrySchedule, retryDelay } from './schedule.ts';

/** What one attempt through a channel came to (the senders' outcomes, made uniform). */
export interface AttemptOutcome {
  ok: boolean;
  retryable: boolean;
  retryAfterMs?: number;
  /** Why it failed; on a success, the recipients that failed (a partial success). */
  error?: string;
  statusCode?: number;
  response?: string;
  recipients?: RecipientResult[];
  payloadSha256?: string;
  durationMs: number;
}

export interface NewDeliveryEvent {
  id: string;
  event: DeliveryEvent;
}

const withId = (deliveryId: string, step: string, event: DeliveryEvent): NewDeliveryEvent => ({
  id: deliveryEventId(deliveryId, step),
  event,
});

/**
 * Every final event shares one id, so whatever the races, a delivery ends at most once: a second
 * ending is a duplicate append and a no-op.
 */
export const FINAL_STEP = 'final';
export const attemptStep = (attempt: number) => `attempt-${attempt}`;

/** Only a realtime webhook ends ABANDONED (the match is dropped for it); the rest end FAILED. */
const abandons = (delivery: Delivery) =>
  delivery.created.channel === 'WEBHOOK' && delivery.created.cadence === 'REALTIME';

/** The events recording attempt `attempt` (1-based) of a delivery that is pending or retrying. */
export function decideAttempt(
  delivery: Delivery,
  attempt: number,
  outcome: AttemptOutcome,
  context: { now: Date; schedule: RetrySchedule; random?: () => number },
): NewDeliveryEvent[] {
  // Responses and errors are the destination's words: recorded, so they must be storable.
  outcome = storableJson(outcome);
  const deliveryId = delivery.created.deliveryId;
  const at = context.now.toISOString();
  const record: AttemptRecord = { deliveryId, attempt, attemptedAt: at, durationMs: outcome.durationMs };
  if (outcome.statusCode !== undefined) record.statusCode = outcome.statusCode;
  if (outcome.response !== undefined) record.response = outcome.response;
  if (outcome.recipients !== undefined) record.recipients = outcome.recipients;
  if (outcome.payloadSha256 !== undefined) record.payloadSha256 = outcome.payloadSha256;

  if (outcome.ok) {
    return [
      withId(deliveryId, FINAL_STEP, {
        type: 'DeliverySent',
        data: { ...record, sentAt: at, ...(outcome.error !== undefined && { errorMessage: outcome.error }) },
      }),
    ];
  }
  const error = outcome.error ?? 'the attempt failed';
  const failed = {
    ...record,
    error,
    retryable: outcome.retryable,
    ...(outcome.retryAfterMs !== undefined && { retryAfterMs: outcome.retryAfterMs }),
  };
  const delay = outcome.retryable
    ? retryDelay(context.schedule, attempt, {
        ...(outcome.retryAfterMs !== undefined && { retryAfterMs: outcome.retryAfterMs }),
        ...(context.random && { random: context.random }),
      })
    : undefined;
  if (delay !== undefined) {
    const nextAttemptAt = new Date(context.now.getTime() + delay).toISOString();
    return [
      withId(deliveryId, attemptStep(attempt), {
        type: 'DeliveryAttemptFailed',
        data: { ...failed, nextAttemptAt },
      }),
    ];
  }
  const reason = outcome.retryable
    ? `gave up after ${attempt} attempt${attempt === 1 ? '' : 's'}: ${error}`
    : `permanent failure: ${error}`;
  const ending: DeliveryEvent = abandons(delivery)
    ? { type: 'DeliveryAbandoned', data: { deliveryId, reason, abandonedAt: at } }
    : { type: 'DeliveryFailed', data: { deliveryId, reason, failedAt: at } };
  return [
    withId(deliveryId, attemptStep(attempt), { type: 'DeliveryAttemptFailed', data: failed }),
    withId(deliveryId, FINAL_STEP, ending),
  ];
}

export function decideSkip(deliveryId: string, reason: string, now: Date): NewDeliveryEvent[] {
  return [
    withId(deliveryId, FINAL_STEP, {
      type: 'DeliverySkipped',
      data: { deliveryId, reason, skippedAt: now.toISOString() },
    }),
  ];
}

/** A digest still failing when the next one is selected: its matches move there. */
export function decideSuperseded(deliveryId: string, by: string, now: Date): NewDeliveryEvent[] {
  return [
    withId(deliveryId, FINAL_STEP, {
      type: 'DeliveryFailed',
      data: {
        deliveryId,
        reason: `not delivered within its window; its matches were selected again by digest ${by}`,
        failedAt: now.toISOString(),
      },
    }),
  ];
}
