import type { Alert, AlertState } from '../alerts/alert.ts';
import { passesFilters } from '../alerts/filters.ts';
import type { NewEvent } from '../eventstore/port.ts';
import { storableJson } from '../storable-text.ts';
import { stillNotifies } from './channels.ts';
import type {
  AttemptRecord,
  Delivery,
  DeliveryAbandoned,
  DeliveryAttemptFailed,
  DeliveryCreated,
  DeliveryCreatedData,
  DeliveryEvent,
  DeliveryFailed,
  DeliverySent,
  DeliverySkipped,
  DeliveryState,
  RecipientResult,
} from './delivery.ts';
import { isFinal } from './delivery.ts';
import { deliveryEventId } from './ids.ts';
import type { MatchedData } from './matched.ts';
import { type RetrySchedule, retryDelay } from './queue/schedule.ts';

/**
 * The delivery decider (docs/delivery.md, "Delivery status"): every command one function, pure;
 * time comes in through the command. The I/O (reading the alert and connection, sending) stays in
 * send.ts and worker.ts.
 */

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

/** The connection a chat or webhook delivery goes to, as it is now. */
export interface ConnectionFacts {
  /** missing also covers a connection of another project. */
  status: 'missing' | 'revoked' | 'deleted' | 'usable';
}

/** What the SKIPPED rules look at, read just before the attempt. */
export interface SendFacts {
  alert: AlertState;
  /** The AlertMatched data of the delivery's matches that could be read, in the delivery's order. */
  matches: readonly MatchedData[];
  /** Chat and webhook deliveries: their connection. Absent for email. */
  connection?: ConnectionFacts;
}

export interface CreateDelivery {
  type: 'CreateDelivery';
  data: DeliveryCreatedData;
}
/** Applies the SKIPPED rules; decides nothing when the delivery may be attempted. */
export interface ScreenDelivery {
  type: 'ScreenDelivery';
  data: { facts: SendFacts; now: Date };
}
export interface SkipDelivery {
  type: 'SkipDelivery';
  data: { reason: string; now: Date };
}
export interface RecordAttempt {
  type: 'RecordAttempt';
  data: { outcome: AttemptOutcome; now: Date; schedule: RetrySchedule; random?: () => number };
}
/**
 * A delivery whose attempts crashed (threw instead of recording an outcome) as many times in a row
 * as its budget allows: it ends like a spent budget (docs/delivery.md, Crashed attempts).
 */
export interface GiveUpCrashed {
  type: 'GiveUpCrashed';
  data: { crashes: number; now: Date };
}
/** A digest still failing when the next one is selected: its matches move there. */
export interface SupersedeDigest {
  type: 'SupersedeDigest';
  data: { by: string; now: Date };
}

export type DeliveryCommand =
  | CreateDelivery
  | ScreenDelivery
  | SkipDelivery
  | RecordAttempt
  | GiveUpCrashed
  | SupersedeDigest;

/**
 * A command for a delivery that has already ended decides nothing: repeating a step (a crash
 * retried, a race lost) is a no-op.
 */
export function decide(command: DeliveryCommand, state: DeliveryState): DeliveryEvent[] {
  if (command.type === 'CreateDelivery') return create(command, state);
  if (state.status === 'initial' || isFinal(state.status)) return [];
  switch (command.type) {
    case 'ScreenDelivery':
      return screen(command, state.delivery);
    case 'SkipDelivery':
      return [skip(state.delivery, command.data.reason, command.data.now)];
    case 'RecordAttempt':
      return recordAttempt(command, state.delivery);
    case 'GiveUpCrashed':
      return [
        ending(
          state.delivery,
          `attempt_crashed: gave up after the attempt crashed ${command.data.crashes} times in a row`,
          command.data.now.toISOString(),
        ),
      ];
    case 'SupersedeDigest':
      return supersede(command, state.delivery);
    default: {
      const unhandled: never = command;
      return unhandled;
    }
  }
}

function create({ data }: CreateDelivery, state: DeliveryState): [DeliveryCreated] | [] {
  return state.status === 'initial' ? [{ type: 'DeliveryCreated', data }] : [];
}

const skip = (delivery: Delivery, reason: string, now: Date): DeliverySkipped => ({
  type: 'DeliverySkipped',
  data: { deliveryId: delivery.created.deliveryId, reason, skippedAt: now.toISOString() },
});

function screen({ data: { facts, now } }: ScreenDelivery, delivery: Delivery): [DeliverySkipped] | [] {
  const reason = skipReason(delivery, facts);
  return reason === undefined ? [] : [skip(delivery, reason, now)];
}

function alertSkipReason(state: AlertState): string | Alert {
  switch (state.status) {
    case 'initial':
      return 'the alert does not exist';
    case 'deleted':
      return 'the alert was deleted before the send';
    case 'paused':
      return 'the alert was paused before the send';
    case 'disabled':
      return 'the alert was disabled by a recipient before the send';
    case 'active':
      return state.alert;
  }
}

/** The SKIPPED rules (docs/delivery.md), in order: the first that applies names the reason. */
function skipReason(delivery: Delivery, facts: SendFacts): string | undefined {
  const created = delivery.created;
  const alert = alertSkipReason(facts.alert);
  if (typeof alert === 'string') return alert;
  if (!stillNotifies(alert.notifications, created.target))
    return 'the alert no longer notifies this destination';
  if (facts.matches.length === 0) return 'none of its matches could be read';
  if (created.cadence === 'REALTIME' && !facts.matches.some((match) => passesFilters(match, alert)))
    return "the match no longer passes the alert's filters";
  const status = facts.connection?.status ?? 'missing';
  switch (created.target.type) {
    case 'WEBHOOK': {
      const id = created.target.webhookConnectionId;
      if (status === 'missing') return `webhook connection ${id} does not exist`;
      return status === 'revoked' ? `webhook connection ${id} was revoked` : undefined;
    }
    case 'CHAT': {
      const id = created.target.chatConnectionId;
      if (status === 'missing') return `chat connection ${id} does not exist`;
      return status === 'deleted' ? `chat connection ${id} was deleted` : undefined;
    }
    case 'EMAIL':
      return currentRecipients(alert, created.target.emails).length === 0
        ? 'no recipient of this delivery is still on the alert'
        : undefined;
  }
}

/** The delivery's recipients still on the alert, spelled as the alert spells them now. */
export function currentRecipients(alert: Alert, emails: readonly string[]): string[] {
  const current = new Map(
    alert.notifications.flatMap((n) =>
      n.type === 'EMAIL' ? [[n.email.trim().toLowerCase(), n.email] as const] : [],
    ),
  );
  return emails.flatMap((email) => {
    const now = current.get(email.trim().toLowerCase());
    return now === undefined ? [] : [now];
  });
}

/** Only a realtime webhook ends ABANDONED (the match is dropped for it); the rest end FAILED. */
const abandons = (delivery: Delivery) =>
  delivery.created.channel === 'WEBHOOK' && delivery.created.cadence === 'REALTIME';

type Attempted =
  | [DeliverySent]
  | [DeliveryAttemptFailed]
  | [DeliveryAttemptFailed, DeliveryAbandoned | DeliveryFailed];

/** Records the next attempt (1-based: attempts so far + 1) of a pending or retrying delivery. */
function recordAttempt({ data }: RecordAttempt, delivery: Delivery): Attempted {
  // Responses and errors are the destination's words: recorded, so they must be storable.
  const outcome = storableJson(data.outcome);
  const deliveryId = delivery.created.deliveryId;
  const attempt = delivery.attempts + 1;
  const at = data.now.toISOString();
  const record: AttemptRecord = { deliveryId, attempt, attemptedAt: at, durationMs: outcome.durationMs };
  if (outcome.statusCode !== undefined) record.statusCode = outcome.statusCode;
  if (outcome.response !== undefined) record.response = outcome.response;
  if (outcome.recipients !== undefined) record.recipients = outcome.recipients;
  if (outcome.payloadSha256 !== undefined) record.payloadSha256 = outcome.payloadSha256;

  if (outcome.ok) {
    return [
      {
        type: 'DeliverySent',
        data: { ...record, sentAt: at, ...(outcome.error !== undefined && { errorMessage: outcome.error }) },
      },
    ];
  }
  const error = outcome.error ?? 'the attempt failed';
  const failed: DeliveryAttemptFailed['data'] = {
    ...record,
    error,
    retryable: outcome.retryable,
    ...(outcome.retryAfterMs !== undefined && { retryAfterMs: outcome.retryAfterMs }),
  };
  const delay = outcome.retryable
    ? retryDelay(data.schedule, attempt, {
        ...(outcome.retryAfterMs !== undefined && { retryAfterMs: outcome.retryAfterMs }),
        ...(data.random && { random: data.random }),
      })
    : undefined;
  if (delay !== undefined) {
    const nextAttemptAt = new Date(data.now.getTime() + delay).toISOString();
    return [{ type: 'DeliveryAttemptFailed', data: { ...failed, nextAttemptAt } }];
  }
  const reason = outcome.retryable
    ? `gave up after ${attempt} attempt${attempt === 1 ? '' : 's'}: ${error}`
    : `permanent failure: ${error}`;
  return [{ type: 'DeliveryAttemptFailed', data: failed }, ending(delivery, reason, at)];
}

/** The end of a delivery that gave up: ABANDONED for a realtime webhook, FAILED for the rest. */
function ending(delivery: Delivery, reason: string, at: string): DeliveryAbandoned | DeliveryFailed {
  const deliveryId = delivery.created.deliveryId;
  return abandons(delivery)
    ? { type: 'DeliveryAbandoned', data: { deliveryId, reason, abandonedAt: at } }
    : { type: 'DeliveryFailed', data: { deliveryId, reason, failedAt: at } };
}

function supersede({ data }: SupersedeDigest, delivery: Delivery): [DeliveryFailed] {
  return [
    {
      type: 'DeliveryFailed',
      data: {
        deliveryId: delivery.created.deliveryId,
        reason: `not delivered within its window; its matches were selected again by digest ${data.by}`,
        failedAt: data.now.toISOString(),
      },
    },
  ];
}

/**
 * Event ids that make a repeated step a no-op. Every final event shares one id, so whatever the
 * races, a delivery ends at most once: a second ending is a duplicate append and a no-op.
 */
export function deliveryEventIdOf(event: DeliveryEvent): string {
  const deliveryId = event.data.deliveryId;
  switch (event.type) {
    case 'DeliveryCreated':
      return deliveryEventId(deliveryId, 'created');
    case 'DeliveryAttemptFailed':
      return deliveryEventId(deliveryId, `attempt-${event.data.attempt}`);
    case 'DeliverySent':
    case 'DeliverySkipped':
    case 'DeliveryAbandoned':
    case 'DeliveryFailed':
      return deliveryEventId(deliveryId, 'final');
  }
}

/** Decided events as the store appends them. */
export const toNewEvents = (events: readonly DeliveryEvent[]): NewEvent[] =>
  events.map((event) => ({ id: deliveryEventIdOf(event), type: event.type, data: event.data }));
