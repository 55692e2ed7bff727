import type { Db } from '../db/db.ts';
import type { EventStore, RecordedEvent } from '../eventstore/port.ts';
import { moveCheckpoint } from './checkpoints.ts';
import type { Projection } from './projection.ts';
import {
  type CatchUpOptions,
  catchUpSubscription,
  type RunSubscriptionOptions,
  rebuildSubscription,
  runSubscription,
} from './runner.ts';
import type { TransactionalSubscriber } from './subscriber.ts';

export { readCheckpoint } from './checkpoints.ts';
export type { Projection } from './projection.ts';

const lockName = (projection: Pick<Projection, 'name'>) => `projection:${projection.name}`;

/** A projection as a transactional subscriber: checkpoint named after it, lock `projection:<name>`. */
export function projectionSubscriber(projection: Projection): TransactionalSubscriber {
  return {
    mode: 'transactional',
    name: projection.name,
    lockName: lockName(projection),
    eventTypes: projection.eventTypes,
    batchSize: 500,
    ...(projection.batchDelayMs ? { batchDelayMs: projection.batchDelayMs } : {}),
    handle: (tx, events) => projection.apply(tx, events),
    reset: (tx) => projection.reset(tx),
  };
}

/**
 * Applies one batch and moves the checkpoint from `from` to `to` in one transaction (no retries);
 * false when the checkpoint was no longer at `from`: nothing was applied.
 */
export async function applyBatch(
  db: Db,
  projection: Projection,
  from: string,
  to: string,
  events: readonly RecordedEvent[],
): Promise<boolean> {
  return db.transaction(async (tx) => {
    if (!(await moveCheckpoint(tx, projection.name, from, to))) return false;
    if (events.length > 0) await projection.apply(tx, events);
    return true;
  });
}

/** Keeps the projection up to date until the signal aborts (see runSubscription). */
export const runProjection = (
  db: Db,
  store: EventStore,
  projection: Projection,
  options: RunSubscriptionOptions,
) => runSubscription(db, store, projectionSubscriber(projection), options);

/** Applies every event after its checkpoint up to the head (see catchUpSubscription). */
export const catchUpProjection = (
  db: Db,
  store: EventStore,
  projection: Projection,
  options: CatchUpOptions & { total?: number } = {},
) => catchUpSubscription(db, store, projectionSubscriber(projection), options);

/** Empties the read model and applies every event again (see rebuildSubscription). */
export const rebuildProjection = (
  db: Db,
  store: EventStore,
  projection: Projection,
  options: CatchUpOptions = {},
) => rebuildSubscription(db, store, projectionSubscriber(projection), options);
