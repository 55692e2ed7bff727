import { setTimeout as sleep } from 'node:timers/promises';
import type { Db, Queryable } from '../db/db.ts';
import { whileLeader } from '../db/leader.ts';
import type { EventStore, RecordedEvent } from '../eventstore/port.ts';
import { comparePositions, START } from '../eventstore/port.ts';
import type { Projection } from './projection.ts';

export type { Projection } from './projection.ts';

export interface RunProjectionOptions {
  signal: AbortSignal;
  /** Events per batch (one transaction each). Default 500. */
  batchSize?: number;
  /** How often a standby process tries to take the projection's lock, in ms. Default 5000. */
  lockRetryMs?: number;
  /** Wait after a failed batch before reading the checkpoint again, in ms. Default 1000, doubling to 30 s. */
  retryDelayMs?: number;
  /** Told of each failed batch; the runner retries it. */
  onError?(error: unknown): void;
}

export interface RebuildOptions {
  batchSize?: number;
  signal?: AbortSignal;
  /** Events applied so far and the total to apply (grows when events arrive during the rebuild). */
  onProgress?(done: number, total: number): void;
}

const HEAD_WAIT_MS = 20;

export const lockName = (projection: Pick<Projection, 'name'>) => `projection:${projection.name}`;

/** Where the read model stands: the position of the last event it reflects. */
export async function readCheckpoint(db: Queryable, name: string): Promise<string> {
  const { rows } = await db.query<{ position: string }>(
    'select position from projection_checkpoints where name = $1',
    [name],
  );
  return rows[0]?.position ?? START;
}

async function ensureCheckpoint(db: Queryable, name: string): Promise<void> {
  await db.query(
    'insert into projection_checkpoints (name, position) values ($1, $2) on conflict (name) do nothing',
    [name, START],
  );
}

/**
 * Applies one batch and moves the checkpoint from `from` to `to` in one transaction. The update
 * locks the checkpoint row, so a concurrent writer waits, then finds the position moved and gets
 * false: nothing was applied, re-read the checkpoint.
 */
export async function applyBatch(
  db: Db,
  projection: Projection,
  from: string,
  to: string,
  events: readonly RecordedEvent[],
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const moved = await tx.query(
      'update projection_checkpoints set position = $3, updated_at = now() where name = $1 and position = $2',
      [projection.name, from, to],
    );
    if (moved.rowCount === 0) return false;
    if (events.length > 0) await projection.apply(tx, events);
    return true;
  });
}

class CheckpointMoved extends Error {}

/**
 * Keeps the projection up to date until the signal aborts. One process at a time holds the
 * projection's lock and applies; the others wait as standbys. Each batch is applied together with
 * its checkpoint, so a crash loses nothing and applies nothing twice.
 */
export async function runProjection(
  db: Db,
  store: EventStore,
  projection: Projection,
  options: RunProjectionOptions,
): Promise<void> {
  await whileLeader(
    db,
    lockName(projection),
    {
      signal: options.signal,
      retryMs: options.lockRetryMs ?? 5000,
      ...(options.onError && { onError: options.onError }),
    },
    () => followWhileLocked(db, store, projection, options),
  );
}

async function followWhileLocked(
  db: Db,
  store: EventStore,
  projection: Projection,
  options: RunProjectionOptions,
): Promise<void> {
  const { signal } = options;
  const baseDelay = options.retryDelayMs ?? 1000;
  let delay = baseDelay;
  while (!signal.aborted) {
    try {
      await ensureCheckpoint(db, projection.name);
      let checkpoint = await readCheckpoint(db, projection.name);
      const subscription = store.subscribe({
        after: checkpoint,
        eventTypes: projection.eventTypes,
        limit: options.batchSize ?? 500,
        signal,
        handle: async (events, lastPosition) => {
          if (!(await applyBatch(db, projection, checkpoint, lastPosition, events)))
            throw new CheckpointMoved();
          checkpoint = lastPosition;
          delay = baseDelay;
        },
      });
      await subscription.done;
    } catch (error) {
      // A rebuild reset the checkpoint, or another applier moved it: start again from the stored one.
      if (error instanceof CheckpointMoved) continue;
      options.onError?.(error);
      await sleep(delay, undefined, { signal }).catch(() => {});
      delay = Math.min(delay * 2, 30_000);
    }
  }
}

/**
 * Applies every event after the stored checkpoint up to the head, batch by batch, then returns the
 * number of events this call applied. Safe beside other appliers: a batch whose checkpoint moved
 * is dropped and reading resumes from the stored checkpoint.
 */
export async function catchUpProjection(
  db: Db,
  store: EventStore,
  projection: Projection,
  options: RebuildOptions & { total?: number } = {},
): Promise<number> {
  const batchSize = options.batchSize ?? 500;
  await ensureCheckpoint(db, projection.name);
  let checkpoint = await readCheckpoint(db, projection.name);
  let total = options.total ?? 0;
  let done = 0;
  // Everything committed before this call: readAll holds back events behind a transaction that is
  // still open anywhere in the database, so "nothing to read" is not yet "caught up".
  const head = await store.headPosition?.({ eventTypes: projection.eventTypes });
  const reachedHead = () => head === undefined || comparePositions(checkpoint, head) >= 0;
  for (;;) {
    options.signal?.throwIfAborted();
    const page = await store.readAll({
      after: checkpoint,
      eventTypes: projection.eventTypes,
      limit: batchSize,
    });
    if (page.lastPosition === checkpoint) {
      if (reachedHead()) break;
      await sleep(HEAD_WAIT_MS, undefined, options.signal ? { signal: options.signal } : {});
      continue;
    }
    if (!(await applyBatch(db, projection, checkpoint, page.lastPosition, page.events))) {
      checkpoint = await readCheckpoint(db, projection.name);
      continue;
    }
    checkpoint = page.lastPosition;
    done += page.events.length;
    total = Math.max(total, done);
    options.onProgress?.(done, total);
    if (page.events.length < batchSize && reachedHead()) break;
  }
  // Events counted but applied by another applier meanwhile are in the read model all the same.
  total = Math.max(total, done);
  options.onProgress?.(total, total);
  return done;
}

/**
 * Empties the read model and sets its checkpoint to START in one transaction, then catches up to
 * the head. A live runner elsewhere finds its checkpoint moved at its next batch and continues
 * from wherever this rebuild has got to. Returns the number of events this call applied.
 */
export async function rebuildProjection(
  db: Db,
  store: EventStore,
  projection: Projection,
  options: RebuildOptions = {},
): Promise<number> {
  await db.transaction(async (tx) => {
    // Checkpoint first: its row lock waits out a batch in flight, whose rows the reset then sees.
    await tx.query(
      `insert into projection_checkpoints (name, position) values ($1, $2)
       on conflict (name) do update set position = excluded.position, updated_at = now()`,
      [projection.name, START],
    );
    await projection.reset(tx);
  });
  const total = (await store.countAll?.({ eventTypes: projection.eventTypes })) ?? 0;
  options.onProgress?.(0, total);
  return catchUpProjection(db, store, projection, { ...options, total });
}
