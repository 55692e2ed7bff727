import type { Db } from '../../src/db/db.ts';
import type { EventStore } from '../../src/eventstore/port.ts';
import type { Projection } from '../../src/projections/projection.ts';
import { applyBatch, readCheckpoint } from '../../src/projections/runner.ts';

/** Applies every event the projection has not seen yet, the way the runner does, then returns. */
export async function catchUp(db: Db, store: EventStore, projection: Projection): Promise<number> {
  await db.query(
    'insert into projection_checkpoints (name, position) values ($1, $2) on conflict (name) do nothing',
    [projection.name, '0/0'],
  );
  let applied = 0;
  for (;;) {
    const from = await readCheckpoint(db, projection.name);
    const page = await store.readAll({ after: from, eventTypes: projection.eventTypes, limit: 500 });
    if (page.lastPosition === from) return applied;
    if (!(await applyBatch(db, projection, from, page.lastPosition, page.events)))
      throw new Error('checkpoint moved under the test');
    applied += page.events.length;
  }
}
