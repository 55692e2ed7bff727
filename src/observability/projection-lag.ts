import type { Queryable } from '../db/db.ts';
import { type EventStore, START } from '../eventstore/port.ts';
import type { Projection } from '../subscriptions/projection.ts';

/**
 * Events of each projection's types recorded after its checkpoint. A projection without a
 * checkpoint row has not started, so everything of its types counts. Empty when the store cannot
 * count (EventStoreDB): the lag is then not reported rather than reported wrong.
 */
export async function projectionLag(
  db: Queryable,
  store: Pick<EventStore, 'countAll'>,
  projections: readonly Pick<Projection, 'name' | 'eventTypes'>[],
): Promise<Map<string, number>> {
  const lag = new Map<string, number>();
  if (!store.countAll || projections.length === 0) return lag;
  const { rows } = await db.query<{ name: string; position: string }>(
    'select name, position from projection_checkpoints where name = any ($1::text[])',
    [projections.map((p) => p.name)],
  );
  const checkpoints = new Map(rows.map((row) => [row.name, row.position]));
  for (const projection of projections) {
    const after = checkpoints.get(projection.name) ?? START;
    lag.set(projection.name, await store.countAll({ after, eventTypes: projection.eventTypes }));
  }
  return lag;
}
