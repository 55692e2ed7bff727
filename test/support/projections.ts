import type { Db } from '../../src/db/db.ts';
import type { EventStore } from '../../src/eventstore/port.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';
import { catchUpProjection } from '../../src/subscriptions/projection-runner.ts';

/** Applies every event the projection has not seen yet, the way the runner does, then returns. */
export const catchUp = (db: Db, store: EventStore, projection: Projection): Promise<number> =>
  catchUpProjection(db, store, projection);
