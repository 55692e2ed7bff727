import type { Queryable } from '../db/db.ts';
import type { RecordedEvent } from '../eventstore/port.ts';

interface SubscriberBase {
  /** Its checkpoint row in projection_checkpoints and its rows in parked_events. */
  name: string;
  /** The leader lock that lets one process at a time follow it. Default: `name`. */
  lockName?: string;
  /** The event types it reads; others are not delivered to it. */
  eventTypes: readonly string[];
  /** Events per batch. Default 500. */
  batchSize?: number;
  /**
   * While events keep arriving, how long to wait after a batch before reading the next, so that a
   * heavy read model takes them in fewer, larger batches and leaves the CPU to the matcher and the
   * deliveries meanwhile (docs/operations.md, "Scheduling"). A first event after a quiet spell is
   * read at once. Default 0.
   */
  batchDelayMs?: number;
}

/**
 * Effects and checkpoint in one transaction (projections, the delivery fan-out): a crash loses
 * nothing and applies nothing twice.
 */
export interface TransactionalSubscriber<Prepared = void> extends SubscriberBase {
  mode: 'transactional';
  /**
   * Optional effects outside the transaction, run before it, whose result `handle` receives. They
   * must be repeatable (appends with deterministic ids): a batch whose transaction fails runs again.
   */
  prepare?(events: readonly RecordedEvent[]): Promise<Prepared>;
  handle(tx: Queryable, events: readonly RecordedEvent[], prepared: Prepared): Promise<void>;
  /** Empties the read model before a rebuild. */
  reset?(tx: Queryable): Promise<void>;
}

/**
 * Effects first, then the checkpoint (matcher, backfill, summarizer): its effects are appends with
 * deterministic ids, so a batch repeated after a crash between the two appends nothing new.
 */
export interface EffectsFirstSubscriber extends SubscriberBase {
  mode: 'effects-first';
  /**
   * Called when following (re)starts after `checkpoint`: on taking the lock, after a failed
   * attempt and after a parked event, so in-memory state is rebuilt to exactly the checkpoint.
   */
  start?(checkpoint: string, signal: AbortSignal): Promise<void>;
  handle(events: readonly RecordedEvent[], signal: AbortSignal): Promise<void>;
}

export type Subscriber = TransactionalSubscriber<unknown> | EffectsFirstSubscriber;
