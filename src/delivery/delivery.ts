import type { AlertKind } from '../alerts/values.ts';
import type { RecordedEvent } from '../eventstore/port.ts';

/** One delivery is one stream: its events, state and evolve live here; decisions in decide.ts. */
export const deliveryStream = (deliveryId: string) => `delivery-${deliveryId}`;

export type Channel = 'EMAIL' | 'CHAT' | 'WEBHOOK';
export type Cadence = 'REALTIME' | 'DAILY' | 'WEEKLY';
export type DigestCadence = Exclude<Cadence, 'REALTIME'>;
export type PayloadType = 'alert.match' | 'alert.digest';

export type DeliveryTarget =
  | { type: 'EMAIL'; emails: string[] }
  | { type: 'CHAT'; chatConnectionId: string; chatChannelId: string }
  | { type: 'WEBHOOK'; webhookConnectionId: string };

/** The alert as it was when the delivery was created: the webhook body's `alert` block. */
export interface AlertSnapshot {
  id: string;
  kind: AlertKind;
  title: string;
  project_id: string;
  organization_id: string;
}

export interface DeliveryWindow {
  start: string;
  end: string;
}

export interface DeliveryCreatedData {
  deliveryId: string;
  type: PayloadType;
  alert: AlertSnapshot;
  channel: Channel;
  target: DeliveryTarget;
  cadence: Cadence;
  /** Digests: the UTC window [start, end). */
  window?: DeliveryWindow;
  matchIds: string[];
  /** Digests: the previous digest whose matches were selected again. */
  reselectedFrom?: string;
  /** llm_summary of matches that had one when the delivery was created (part of the webhook body). */
  summaries?: Record<string, string>;
  createdAt: string;
}

/** One recipient of an email attempt. */
export interface RecipientResult {
  email: string;
  ok: boolean;
  response?: string;
  error?: string;
}

/** What every attempt records, for the audit. */
export interface AttemptRecord {
  deliveryId: string;
  attempt: number;
  attemptedAt: string;
  durationMs: number;
  /** HTTP status (webhook). */
  statusCode?: number;
  /** SMTP reply or chat message id. */
  response?: string;
  recipients?: RecipientResult[];
  /** sha256 (hex) of the exact webhook body POSTed. */
  payloadSha256?: string;
}

export interface DeliveryCreated {
  type: 'DeliveryCreated';
  data: DeliveryCreatedData;
}
export interface DeliveryAttemptFailed {
  type: 'DeliveryAttemptFailed';
  data: AttemptRecord & {
    error: string;
    retryable: boolean;
    retryAfterMs?: number;
    /** Absent when no attempt follows (the delivery ends with the next event). */
    nextAttemptAt?: string;
  };
}
export interface DeliverySent {
  type: 'DeliverySent';
  /** `errorMessage`: the recipients that failed on a partial success. */
  data: AttemptRecord & { sentAt: string; errorMessage?: string };
}
export interface DeliverySkipped {
  type: 'DeliverySkipped';
  data: { deliveryId: string; reason: string; skippedAt: string };
}
export interface DeliveryAbandoned {
  type: 'DeliveryAbandoned';
  data: { deliveryId: string; reason: string; abandonedAt: string };
}
export interface DeliveryFailed {
  type: 'DeliveryFailed';
  data: { deliveryId: string; reason: string; failedAt: string };
}

export type DeliveryEvent =
  | DeliveryCreated
  | DeliveryAttemptFailed
  | DeliverySent
  | DeliverySkipped
  | DeliveryAbandoned
  | DeliveryFailed;

export type DeliveryEventType = DeliveryEvent['type'];
export const DELIVERY_EVENT_TYPES: readonly DeliveryEventType[] = [
  'DeliveryCreated',
  'DeliveryAttemptFailed',
  'DeliverySent',
  'DeliverySkipped',
  'DeliveryAbandoned',
  'DeliveryFailed',
];

/**
 * pending: created, no attempt yet; retrying: an attempt failed and another is scheduled;
 * the rest are final.
 */
export type DeliveryStatus = 'pending' | 'retrying' | 'sent' | 'skipped' | 'abandoned' | 'failed';

/** The spec's status of a delivery (docs/delivery.md), plus PENDING before the first attempt. */
export type PublicStatus = 'PENDING' | 'SENT' | 'FAILED' | 'SKIPPED' | 'ABANDONED';

/** What changes after creation: all the deliveries read model keeps of a delivery's progress. */
export interface DeliveryProgress {
  attempts: number;
  lastError?: string;
  nextAttemptAt?: string;
  sentAt?: string;
  finishedAt?: string;
}

export interface Delivery extends DeliveryProgress {
  created: DeliveryCreatedData;
}

export type DeliveryState = { status: 'initial' } | { status: DeliveryStatus; delivery: Delivery };

export const initialDeliveryState = (): DeliveryState => ({ status: 'initial' });

export const isFinal = (status: DeliveryStatus) => status !== 'pending' && status !== 'retrying';

export function publicStatus(status: DeliveryStatus): PublicStatus {
  switch (status) {
    case 'pending':
      return 'PENDING';
    case 'sent':
      return 'SENT';
    case 'skipped':
      return 'SKIPPED';
    case 'abandoned':
      return 'ABANDONED';
    case 'retrying':
    case 'failed':
      return 'FAILED';
  }
}

export function evolve(state: DeliveryState, event: DeliveryEvent): DeliveryState {
  if (event.type === 'DeliveryCreated') {
    if (state.status !== 'initial') return state;
    return { status: 'pending', delivery: { created: event.data, attempts: 0 } };
  }
  if (state.status === 'initial') return state;
  return advance(state, event);
}

/**
 * Every change after creation, on whatever carries the progress (the state here, a read-model
 * row in projections/deliveries): a final delivery changes no more.
 */
export function advance<P extends DeliveryProgress>(
  state: { status: DeliveryStatus; delivery: P },
  event: Exclude<DeliveryEvent, DeliveryCreated>,
): { status: DeliveryStatus; delivery: P } {
  if (isFinal(state.status)) return state;
  const delivery = state.delivery;
  switch (event.type) {
    case 'DeliveryAttemptFailed': {
      const { nextAttemptAt: _previous, ...rest } = delivery;
      return {
        status: 'retrying',
        delivery: {
          ...rest,
          attempts: Math.max(delivery.attempts, event.data.attempt),
          lastError: event.data.error,
          ...(event.data.nextAttemptAt !== undefined && { nextAttemptAt: event.data.nextAttemptAt }),
        } as P,
      };
    }
    case 'DeliverySent': {
      const { lastError: _error, nextAttemptAt: _next, ...rest } = delivery;
      return {
        status: 'sent',
        delivery: {
          ...rest,
          attempts: Math.max(delivery.attempts, event.data.attempt),
          sentAt: event.data.sentAt,
          finishedAt: event.data.sentAt,
          ...(event.data.errorMessage !== undefined && { lastError: event.data.errorMessage }),
        } as P,
      };
    }
    case 'DeliverySkipped':
      return final('skipped', delivery, event.data.reason, event.data.skippedAt);
    case 'DeliveryAbandoned':
      return final('abandoned', delivery, event.data.reason, event.data.abandonedAt);
    case 'DeliveryFailed':
      return final('failed', delivery, event.data.reason, event.data.failedAt);
    default: {
      const unhandled: never = event;
      return unhandled;
    }
  }
}

function final<P extends DeliveryProgress>(status: DeliveryStatus, delivery: P, reason: string, at: string) {
  const { nextAttemptAt: _next, ...rest } = delivery;
  return { status, delivery: { ...rest, lastError: reason, finishedAt: at } as P };
}

/** The one place a stored event becomes a typed delivery event: the stream holds only these. */
export const toDeliveryEvent = (recorded: Pick<RecordedEvent, 'type' | 'data'>): DeliveryEvent =>
  ({ type: recorded.type, data: recorded.data }) as DeliveryEvent;

export const foldDelivery = (
  events: readonly DeliveryEvent[],
  state: DeliveryState = initialDeliveryState(),
) => events.reduce(evolve, state);
