import { setTimeout as sleep } from 'node:timers/promises';
import type { Db, Queryable } from '../db/db.ts';
import { whileLeader } from '../db/leader.ts';
import { type EventStore, type RecordedEvent, START } from '../eventstore/port.ts';

/**
 * A consumer of the event store whose effects are appends with deterministic ids: it handles a
 * batch, then saves the batch's end as its checkpoint. A crash between the two repeats the batch,
 * and the repeated appends are no-ops. One process at a time follows it (a named lock); the
 * others wait as standbys and take over when the holder dies.
 */
export interface Consumer {
  /** Checkpoint row in projection_checkpoints and lock name: `consumer:<name>`. */
  name: string;
  eventTypes: readonly string[];
  /** Events per batch. Default 100. */
  batchSize?: number;
  /**
   * Called when the consumer (re)starts after `checkpoint`: on taking the lock, and after a
   * failed batch, so in-memory state is rebuilt to exactly the checkpoint.
   */
  start?(checkpoint: string, signal: AbortSignal): Promise<void>;
  handle(events: readonly RecordedEvent[], signal: AbortSignal): Promise<void>;
}

export interface RunConsumerOptions {
  signal: AbortSignal;
  /** How often a standby tries to take the lock, in ms. Default 5000. */
  lockRetryMs?: number;
  /** Wait after a failed batch, in ms. Default 1000, doubling to 30 s. */
  retryDelayMs?: number;
  onError?(error: unknown): void;
}

export const checkpointName = (consumer: Pick<Consumer, 'name'>) => `consumer:${consumer.name}`;

export async function readConsumerCheckpoint(
  db: Queryable,
  consumer: Pick<Consumer, 'name'>,
): Promise<string> {
  const { rows } = await db.query<{ position: string }>(
    'select position from projection_checkpoints where name = $1',
    [checkpointName(consumer)],
  );
  return rows[0]?.position ?? START;
}

/** Moves the checkpoint only from where this holder left it; false when someone else moved it. */
async function saveCheckpoint(db: Queryable, consumer: Consumer, from: string, to: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'update projection_checkpoints set position = $3, updated_at = now() where name = $1 and position = $2',
    [checkpointName(consumer), from, to],
  );
  return rowCount === 1;
}

class CheckpointMoved extends Error {}

export async function runConsumer(
  db: Db,
  store: EventStore,
  consumer: Consumer,
  options: RunConsumerOptions,
): Promise<void> {
  await whileLeader(
    db,
    checkpointName(consumer),
    {
      signal: options.signal,
      retryMs: options.lockRetryMs ?? 5000,
      ...(options.onError && { onError: options.onError }),
    },
    () => followWhileLocked(db, store, consumer, options),
  );
}

async function followWhileLocked(db: Db, store: EventStore, consumer: Consumer, options: RunConsumerOptions) {
  const { signal } = options;
  const baseDelay = options.retryDelayMs ?? 1000;
  let delay = baseDelay;
  while (!signal.aborted) {
    try {
      await db.query(
        'insert into projection_checkpoints (name, position) values ($1, $2) on conflict (name) do nothing',
        [checkpointName(consumer), START],
      );
      let checkpoint = await readConsumerCheckpoint(db, consumer);
      await consumer.start?.(checkpoint, signal);
      const subscription = store.subscribe({
        after: checkpoint,
        eventTypes: consumer.eventTypes,
        limit: consumer.batchSize ?? 100,
        signal,
        handle: async (events, lastPosition) => {
          await consumer.handle(events, signal);
          // Stopping mid-batch leaves the checkpoint where it was: the batch runs again next time.
          signal.throwIfAborted();
          if (!(await saveCheckpoint(db, consumer, checkpoint, lastPosition))) throw new CheckpointMoved();
          checkpoint = lastPosition;
          delay = baseDelay;
        },
      });
      await subscription.done;
    } catch (error) {
      if (signal.aborted) return;
      if (!(error instanceof CheckpointMoved)) {
        options.onError?.(error);
        await sleep(delay, undefined, { signal }).catch(() => {});
        delay = Math.min(delay * 2, 30_000);
      }
    }
  }
}
