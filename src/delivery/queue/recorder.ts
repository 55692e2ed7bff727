import type { Logger } from 'pino';
import type { Db } from '../../db/db.ts';
import { ConflictError, WrongExpectedRevisionError } from '../../errors.ts';
import type { AppendOptions, EventStore, NewEvent } from '../../eventstore/port.ts';
import { type QueueSettlement, settleDeliveries } from './queue.ts';

/**
 * What happens to the queue row once the outcome is stored. A reschedule starts the row's crash
 * count again, unless it records a crash (`crashes`: the crashes in a row, this one included).
 */
export type QueueStep =
  | { kind: 'complete' }
  | { kind: 'reschedule'; dueAt: Date; attempts?: number; crashes?: number };

export interface Recording {
  deliveryId: string;
  /** The attempt's events, appended with the revision that was read; none when only the row changes. */
  append?: { streamId: string; events: NewEvent[]; options: AppendOptions };
  queue: QueueStep;
}

/** recorded: stored and the row settled; lost: another process appended first (the lease is released). */
export type RecordResult = 'recorded' | 'lost';

export interface Recorder {
  record(recording: Recording): Promise<RecordResult>;
  /** Waits until everything recorded so far is stored. */
  close(): Promise<void>;
}

export interface RecorderDeps {
  db: Db;
  store: EventStore;
  log: Logger;
}

const isRace = (error: unknown) =>
  error instanceof WrongExpectedRevisionError || error instanceof ConflictError;

interface Pending {
  recording: Recording;
  resolve(result: RecordResult): void;
  reject(error: unknown): void;
}

type Appended = { ok: true } | { ok: false; race: boolean; error: unknown };

async function appendOne(store: EventStore, { recording }: Pending): Promise<Appended> {
  const append = recording.append!;
  try {
    await store.append(append.streamId, append.events, append.options);
    return { ok: true };
  } catch (error) {
    return { ok: false, race: isRace(error), error };
  }
}

/**
 * All the appends in one appendMany (one transaction on PostgreSQL). It refuses the whole call
 * for one refused append, so then each is appended on its own to find which: a repeat of an append
 * already written is a duplicate, a no-op.
 */
async function appendAll(store: EventStore, items: readonly Pending[]): Promise<Appended[]> {
  if (items.length === 0) return [];
  if (items.length > 1) {
    try {
      await store.appendMany(
        items.map(({ recording }) => ({
          streamId: recording.append!.streamId,
          events: recording.append!.events,
          options: recording.append!.options,
        })),
      );
      return items.map(() => ({ ok: true }));
    } catch {
      // Fall through: one by one.
    }
  }
  return Promise.all(items.map((item) => appendOne(store, item)));
}

/**
 * Records attempt outcomes in batches: the events of every recording waiting, then one statement
 * for all their queue rows. A row changes only after its events are stored, so a crash in between
 * leaves a row whose stream says what to do (docs/delivery.md, crash safety). Batches form on
 * their own: while one is being written, the next recordings wait and go together.
 */
export function createRecorder(
  deps: RecorderDeps,
  owner: string,
  options: { maxBatch?: number } = {},
): Recorder {
  const maxBatch = options.maxBatch ?? 128;
  const pending: Pending[] = [];
  let running: Promise<void> | undefined;

  async function flush(batch: Pending[]) {
    const appending = batch.filter((p) => p.recording.append);
    const results = await appendAll(deps.store, appending);
    const appended = new Map(appending.map((p, i) => [p, results[i]!] as const));

    const settlement: {
      complete: string[];
      reschedule: QueueSettlement['reschedule'][number][];
      release: string[];
    } = { complete: [], reschedule: [], release: [] };
    const outcomes: Array<[Pending, RecordResult]> = [];
    for (const p of batch) {
      const result = appended.get(p);
      if (result && !result.ok) {
        if (!result.race) {
          p.reject(result.error);
          continue;
        }
        deps.log.warn(
          { err: result.error, deliveryId: p.recording.deliveryId },
          'another deliverer recorded this delivery first',
        );
        settlement.release.push(p.recording.deliveryId);
        outcomes.push([p, 'lost']);
        continue;
      }
      const step = p.recording.queue;
      if (step.kind === 'complete') settlement.complete.push(p.recording.deliveryId);
      else
        settlement.reschedule.push({
          deliveryId: p.recording.deliveryId,
          dueAt: step.dueAt,
          ...(step.attempts !== undefined && { attempts: step.attempts }),
          ...(step.crashes !== undefined && { crashes: step.crashes }),
        });
      outcomes.push([p, 'recorded']);
    }
    // The events are stored: a row left as it was comes back when its lease runs out, and its
    // stream then says the delivery is finished or when to try again.
    await settleDeliveries(deps.db, owner, settlement).catch((error: unknown) =>
      deps.log.warn({ err: error }, 'could not settle delivery queue rows; their leases will run out'),
    );
    for (const [p, result] of outcomes) p.resolve(result);
  }

  async function drain() {
    // Let the outcomes that complete in the same turn of the event loop join the first batch.
    await new Promise((resolve) => setImmediate(resolve));
    while (pending.length > 0) {
      const batch = pending.splice(0, maxBatch);
      await flush(batch).catch((error: unknown) => {
        for (const p of batch) p.reject(error);
      });
    }
    running = undefined;
  }

  return {
    record(recording) {
      return new Promise<RecordResult>((resolve, reject) => {
        pending.push({ recording, resolve, reject });
        running ??= drain();
      });
    },
    async close() {
      while (running) await running;
    },
  };
}
