import type { Queryable } from '../db/db.ts';
import { START } from '../eventstore/port.ts';

/**
 * A subscription's checkpoint: the position of the last event it has handled, one row per
 * subscription in projection_checkpoints (docs/event-store.md).
 */

export async function ensureCheckpoint(q: Queryable, name: string): Promise<void> {
  await q.query(
    'insert into projection_checkpoints (name, position) values ($1, $2) on conflict (name) do nothing',
    [name, START],
  );
}

/** Where the subscription stands; START when it has never run. */
export async function readCheckpoint(q: Queryable, name: string): Promise<string> {
  const { rows } = await q.query<{ position: string }>(
    'select position from projection_checkpoints where name = $1',
    [name],
  );
  return rows[0]?.position ?? START;
}

/**
 * Moves the checkpoint from `from` to `to`; false when it is no longer at `from` (another holder
 * or a rebuild moved it). Inside a transaction the update locks the row, so a concurrent mover
 * waits, then finds the position changed.
 */
export async function moveCheckpoint(q: Queryable, name: string, from: string, to: string): Promise<boolean> {
  const { rowCount } = await q.query(
    'update projection_checkpoints set position = $3, updated_at = now() where name = $1 and position = $2',
    [name, from, to],
  );
  return rowCount === 1;
}

/** Sets the checkpoint back to START (a rebuild), creating it when missing. */
export async function resetCheckpoint(q: Queryable, name: string): Promise<void> {
  await q.query(
    `insert into projection_checkpoints (name, position) values ($1, $2)
     on conflict (name) do update set position = excluded.position, updated_at = now()`,
    [name, START],
  );
}
