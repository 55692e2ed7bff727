import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Db } from '../db/db.ts';
import { whileLeader } from '../db/leader.ts';
import type { EventStore } from '../eventstore/port.ts';
import { comparePositions } from '../eventstore/port.ts';
import { retry } from '../retry.ts';
import { ensureCheckpoint, readCheckpoint, resetCheckpoint } from './checkpoints.ts';
import { type DeliverContext, deliverBatch, type RetryPolicy } from './deliver.ts';
import { clearParked, listParked, parkEvent, unparkEvent } from './parked.ts';
import type { Subscriber } from './subscriber.ts';

export interface RunSubscriptionOptions extends RetryPolicy {
  signal: AbortSignal;
  /** Events per batch; overrides the subscriber's. */
  batchSize?: number;
  /** How often a standby tries to take the lock, in ms. Default LOCK_RETRY_MS (2000). */
  lockRetryMs?: number;
  /** Parked events are logged here at error level. */
  log?: Logger;
  /** Told of each failed attempt (a batch, an event, or following itself). */
  onError?(error: unknown): void;
}

export interface CatchUpOptions extends RetryPolicy {
  batchSize?: number;
  signal?: AbortSignal;
  log?: Logger;
  /** Events handled so far and the total to handle (grows when events arrive meanwhile). */
  onProgress?(done: number, total: number): void;
}

/** Follow restarts waiting 1 s, doubling to 30 s, while the database or store is unreachable. */
const RESTART_BACKOFF = { initialMs: 1000, maxMs: 30_000 };
const HEAD_WAIT_MS = 20;

class CheckpointMoved extends Error {}

const never = new AbortController().signal;

function context(db: Db, subscriber: Subscriber, options: CatchUpOptions & Partial<RunSubscriptionOptions>) {
  const ctx: DeliverContext = {
    db,
    subscriber,
    signal: options.signal ?? never,
    policy: options,
    log: options.log,
    onError: options.onError,
  };
  return ctx;
}

/**
 * Keeps the subscriber up to date until the signal aborts. One process at a time holds its lock
 * and follows the store from the checkpoint; the others wait as standbys. Each batch goes through
 * deliverBatch (retries, then parking of the event that keeps failing). When following itself
 * fails (database or store unreachable), it starts again from the stored checkpoint after a
 * backoff.
 */
export async function runSubscription(
  db: Db,
  store: EventStore,
  subscriber: Subscriber,
  options: RunSubscriptionOptions,
): Promise<void> {
  const { signal } = options;
  const ctx = context(db, subscriber, options);
  let progressed = false;
  const limit = options.batchSize ?? subscriber.batchSize ?? 500;
  const followOnce = async () => {
    await ensureCheckpoint(db, subscriber.name);
    let checkpoint = await readCheckpoint(db, subscriber.name);
    if (subscriber.mode === 'effects-first') await subscriber.start?.(checkpoint, signal);
    const subscription = store.subscribe({
      after: checkpoint,
      eventTypes: subscriber.eventTypes,
      limit,
      signal,
      handle: async (events, lastPosition, more) => {
        if (!(await deliverBatch(ctx, checkpoint, lastPosition, events))) throw new CheckpointMoved();
        checkpoint = lastPosition;
        progressed = true;
        // A full batch means a backlog: read on at once. A short one means live events: let more gather.
        if (subscriber.batchDelayMs && !more)
          await sleep(subscriber.batchDelayMs, undefined, { signal }).catch(() => undefined);
      },
    });
    await subscription.done;
  };
  const follow = async () => {
    progressed = false;
    for (;;) {
      try {
        return await followOnce();
      } catch (error) {
        // A rebuild reset the checkpoint, or another holder moved it: start again from the stored one.
        if (error instanceof CheckpointMoved && !signal.aborted) continue;
        // After progress, a failure starts the backoff afresh (whileLeader runs this again).
        if (progressed && !signal.aborted) {
          options.onError?.(error);
          return;
        }
        throw error;
      }
    }
  };
  await whileLeader(
    db,
    subscriber.lockName ?? subscriber.name,
    {
      signal,
      ...(options.lockRetryMs !== undefined && { retryMs: options.lockRetryMs }),
      ...(options.onError && { onError: options.onError }),
    },
    () =>
      retry(follow, {
        signal,
        backoff: RESTART_BACKOFF,
        onFailedAttempt: (error) => {
          if (!signal.aborted) options.onError?.(error);
        },
      }).catch((error: unknown) => {
        if (!signal.aborted) throw error;
      }),
  );
}

/**
 * Handles every event after the stored checkpoint up to the head, batch by batch (with the same
 * retries and parking as the runner), then returns the number of events this call handled. Safe
 * beside other holders: a batch whose checkpoint moved is dropped and reading resumes from the
 * stored checkpoint.
 */
export async function catchUpSubscription(
  db: Db,
  store: EventStore,
  subscriber: Subscriber,
  options: CatchUpOptions & { total?: number } = {},
): Promise<number> {
  const batchSize = options.batchSize ?? subscriber.batchSize ?? 500;
  const ctx = context(db, subscriber, options);
  await ensureCheckpoint(db, subscriber.name);
  let checkpoint = await readCheckpoint(db, subscriber.name);
  if (subscriber.mode === 'effects-first') await subscriber.start?.(checkpoint, ctx.signal);
  let total = options.total ?? 0;
  let done = 0;
  // Everything committed before this call: readAll holds back events behind a transaction that is
  // still open anywhere in the database, so "nothing to read" is not yet "caught up".
  const head = await store.headPosition?.({ eventTypes: subscriber.eventTypes });
  const reachedHead = () => head === undefined || comparePositions(checkpoint, head) >= 0;
  for (;;) {
    options.signal?.throwIfAborted();
    const page = await store.readAll({
      after: checkpoint,
      eventTypes: subscriber.eventTypes,
      limit: batchSize,
    });
    if (page.lastPosition === checkpoint) {
      if (reachedHead()) break;
      await sleep(HEAD_WAIT_MS, undefined, options.signal ? { signal: options.signal } : {});
      continue;
    }
    if (!(await deliverBatch(ctx, checkpoint, page.lastPosition, page.events))) {
      checkpoint = await readCheckpoint(db, subscriber.name);
      if (subscriber.mode === 'effects-first') await subscriber.start?.(checkpoint, ctx.signal);
      continue;
    }
    checkpoint = page.lastPosition;
    done += page.events.length;
    total = Math.max(total, done);
    options.onProgress?.(done, total);
    if (page.events.length < batchSize && reachedHead()) break;
  }
  // Events counted but handled by another holder meanwhile are in the read model all the same.
  total = Math.max(total, done);
  options.onProgress?.(total, total);
  return done;
}

/**
 * Empties the read model, sets its checkpoint to START and forgets its parked events in one
 * transaction, then catches up to the head (parking again what still fails). A live runner
 * elsewhere finds its checkpoint moved at its next batch and continues from wherever this rebuild
 * has got to. Returns the number of events this call handled.
 */
export async function rebuildSubscription(
  db: Db,
  store: EventStore,
  subscriber: Subscriber,
  options: CatchUpOptions = {},
): Promise<number> {
  await db.transaction(async (tx) => {
    // Checkpoint first: its row lock waits out a batch in flight, whose rows the reset then sees.
    await resetCheckpoint(tx, subscriber.name);
    await clearParked(tx, subscriber.name);
    if (subscriber.mode === 'transactional') await subscriber.reset?.(tx);
  });
  const total = (await store.countAll?.({ eventTypes: subscriber.eventTypes })) ?? 0;
  options.onProgress?.(0, total);
  return catchUpSubscription(db, store, subscriber, { ...options, total });
}

export interface RetryParkedResult {
  /** Handled now and no longer parked. */
  replayed: number;
  /** Still failing: kept, with the new error and one more attempt. */
  failing: number;
  /** No longer in the store (deleted stream): unparked. */
  missing: number;
}

/**
 * Replays the subscriber's parked events through its handler, oldest first (after a fix): those
 * that now succeed are unparked (in the handler's transaction when it has one), the others stay
 * parked with their new error.
 */
export async function retryParked(
  db: Db,
  store: EventStore,
  subscriber: Subscriber,
  options: { signal?: AbortSignal } = {},
): Promise<RetryParkedResult> {
  const signal = options.signal ?? never;
  const parked = (await listParked(db, subscriber.name)).sort((a, b) =>
    comparePositions(a.position, b.position),
  );
  const result: RetryParkedResult = { replayed: 0, failing: 0, missing: 0 };
  if (parked.length === 0) return result;
  if (subscriber.mode === 'effects-first') {
    await subscriber.start?.(await readCheckpoint(db, subscriber.name), signal);
  }
  for (const entry of parked) {
    signal.throwIfAborted();
    const event = (await store.readStream(entry.streamId)).find((e) => e.id === entry.eventId);
    if (!event) {
      await unparkEvent(db, subscriber.name, entry.position);
      result.missing++;
      continue;
    }
    try {
      if (subscriber.mode === 'transactional') {
        const prepared = subscriber.prepare ? await subscriber.prepare([event]) : undefined;
        await db.transaction(async (tx) => {
          await subscriber.handle(tx, [event], prepared);
          await unparkEvent(tx, subscriber.name, entry.position);
        });
      } else {
        await subscriber.handle([event], signal);
        await unparkEvent(db, subscriber.name, entry.position);
      }
      result.replayed++;
    } catch (error) {
      signal.throwIfAborted();
      await parkEvent(db, subscriber.name, event, error, 1);
      result.failing++;
    }
  }
  return result;
}
