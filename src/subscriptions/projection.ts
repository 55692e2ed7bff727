import type { Queryable } from '../db/db.ts';
import type { RecordedEvent } from '../eventstore/port.ts';

/** A read model built from events: applied in batches, each batch with its checkpoint in one transaction. */
export interface Projection {
  name: string;
  /** The event types it reads; others are not delivered to it. */
  eventTypes: readonly string[];
  apply(tx: Queryable, events: readonly RecordedEvent[]): Promise<void>;
  /** See Subscriber.batchDelayMs. */
  batchDelayMs?: number;
  /** Empties the read model before a rebuild. */
  reset(tx: Queryable): Promise<void>;
}
