import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { type AlertEvent, type AlertState, alertStream, foldAlert } from '../alerts/alert.ts';
import type { Db } from '../db/db.ts';
import { ConflictError, WrongExpectedRevisionError } from '../errors.ts';
import type { EventStore } from '../eventstore/port.ts';
import { decideAttempt, decideSkip, type NewDeliveryEvent } from './decide.ts';
import { type DeliveryEvent, deliveryStream, foldDelivery, isFinal } from './delivery.ts';
import { readMatches } from './matched.ts';
import {
  claimDeliveries,
  completeDelivery,
  extendLeases,
  QUEUE_CHANNEL,
  releaseDelivery,
  rescheduleDelivery,
} from './queue.ts';
import type { RetrySchedule } from './schedule.ts';
import { type ChannelDeps, directLookups, type Lookups, memoizedLookups, prepareAttempt } from './send.ts';
import { Wakeup } from './wakeup.ts';

export interface DelivererDeps {
  db: Db;
  store: EventStore;
  channels: ChannelDeps;
  schedule: RetrySchedule;
  now(): Date;
  log: Logger;
  random?: () => number;
}

export interface DelivererOptions {
  /** Attempts in flight at once in this process. Default 64. */
  concurrency?: number;
  /** Lease on a claimed delivery, renewed while it is worked on. Default 20 000 ms. */
  leaseMs?: number;
  /** Longest sleep between looks at the queue when no notification comes. Default 500 ms. */
  pollMs?: number;
  owner?: string;
}

export type AttemptResult = 'finished' | 'rescheduled' | 'lost';

/** What the deliveries of one claim share: the alert's state and the connections, read once. */
export interface ClaimContext {
  alerts: Map<string, Promise<AlertState>>;
  lookups: Lookups;
  /** Removes a finished delivery's queue row (batched by the worker). */
  complete(id: string): Promise<void>;
}

export const freshContext = (db: Db): ClaimContext => ({
  alerts: new Map(),
  lookups: directLookups,
  complete: (id) => completeDelivery(db, id),
});

async function alertState(deps: DelivererDeps, context: ClaimContext, alertId: string): Promise<AlertState> {
  if (!context.alerts.has(alertId)) {
    context.alerts.set(
      alertId,
      deps.store
        .readStream(alertStream(alertId))
        .then((events) => foldAlert(events.map((e) => ({ type: e.type, data: e.data }) as AlertEvent))),
    );
  }
  return context.alerts.get(alertId)!;
}

/** Deletes finished deliveries' queue rows in batches; a row left by a crash is cleaned up when re-claimed. */
function batchedCompleter(db: Db, log: Logger) {
  let pending: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();
  const flush = () => {
    timer = undefined;
    const ids = pending;
    pending = [];
    if (ids.length === 0) return flushing;
    flushing = flushing.then(() =>
      db
        .query('delete from delivery_queue where delivery_id = any($1::text[])', [ids])
        .then(() => undefined)
        .catch((error: unknown) =>
          log.warn({ err: error }, 'could not remove finished deliveries from the queue'),
        ),
    );
    return flushing;
  };
  return {
    complete(id: string) {
      pending.push(id);
      timer ??= setTimeout(flush, 10);
      return Promise.resolve();
    },
    async close() {
      if (timer) clearTimeout(timer);
      await flush();
    },
  };
}

const isRace = (error: unknown) =>
  error instanceof WrongExpectedRevisionError || error instanceof ConflictError;

/**
 * Makes the next attempt of one claimed delivery. The stream is the truth: its fold says whether
 * anything is left to do and when; the outcome is appended with the revision that was read and
 * with deterministic event ids, so a step repeated after a crash, or raced by another process
 * whose lease outlived ours, records nothing twice.
 */
export async function attemptDelivery(
  deps: DelivererDeps,
  deliveryId: string,
  owner: string,
  context: ClaimContext = freshContext(deps.db),
): Promise<AttemptResult> {
  const stream = deliveryStream(deliveryId);
  const recorded = await deps.store.readStream(stream);
  const state = foldDelivery(recorded.map((e) => ({ type: e.type, data: e.data }) as DeliveryEvent));
  if (state.status === 'initial') {
    deps.log.warn({ deliveryId }, 'queued delivery has no DeliveryCreated event; dropping it from the queue');
    await context.complete(deliveryId);
    return 'finished';
  }
  const delivery = state.delivery;
  if (isFinal(state.status)) {
    await context.complete(deliveryId);
    return 'finished';
  }
  if (delivery.nextAttemptAt && new Date(delivery.nextAttemptAt) > deps.now()) {
    await rescheduleDelivery(deps.db, owner, deliveryId, new Date(delivery.nextAttemptAt), delivery.attempts);
    return 'rescheduled';
  }
  const last = recorded.at(-1)!;
  const log = deps.log.child({
    deliveryId,
    correlationId: last.metadata.correlationId,
    causationId: last.id,
  });

  const alertId = delivery.created.alert.id;
  const [alert, matches] = await Promise.all([
    alertState(deps, context, alertId),
    readMatches(deps.store, delivery.created.matchIds),
  ]);
  const preparation = await prepareAttempt(deps.channels, delivery, alert, matches, context.lookups);
  let decided: NewDeliveryEvent[];
  if ('skip' in preparation) {
    decided = decideSkip(deliveryId, preparation.skip, deps.now());
  } else {
    const outcome = await preparation.send();
    decided = decideAttempt(delivery, delivery.attempts + 1, outcome, {
      now: deps.now(),
      schedule: deps.schedule,
      ...(deps.random && { random: deps.random }),
    });
  }

  try {
    await deps.store.append(
      stream,
      decided.map(({ id, event }) => ({ id, type: event.type, data: event.data })),
      {
        expectedRevision: last.revision,
        ...(last.metadata.correlationId !== undefined && { correlationId: last.metadata.correlationId }),
        causationId: last.id,
      },
    );
  } catch (error) {
    if (!isRace(error)) throw error;
    log.warn({ err: error }, 'another deliverer recorded this delivery first');
    await releaseDelivery(deps.db, owner, deliveryId);
    return 'lost';
  }
  const next = foldDelivery(
    decided.map((d) => d.event),
    state,
  );
  if (next.status === 'initial' || isFinal(next.status)) {
    log.info({ status: next.status }, 'delivery finished');
    await context.complete(deliveryId);
    return 'finished';
  }
  log.info(
    {
      attempt: next.delivery.attempts,
      nextAttemptAt: next.delivery.nextAttemptAt,
      error: next.delivery.lastError,
    },
    'delivery attempt failed',
  );
  await rescheduleDelivery(
    deps.db,
    owner,
    deliveryId,
    new Date(next.delivery.nextAttemptAt ?? deps.now()),
    next.delivery.attempts,
  );
  return 'rescheduled';
}

/**
 * The deliverer's queue worker: claims due deliveries (several processes may run it at once),
 * keeps up to `concurrency` attempts in flight, renews their leases, and sleeps until a
 * notification, a completion or the poll interval.
 */
export async function runDeliveryWorker(
  deps: DelivererDeps,
  signal: AbortSignal,
  options: DelivererOptions = {},
): Promise<void> {
  const concurrency = options.concurrency ?? 64;
  const leaseMs = options.leaseMs ?? 20_000;
  const pollMs = options.pollMs ?? 500;
  const owner = options.owner ?? randomUUID();
  const wakeups = new Wakeup(deps.db, QUEUE_CHANNEL);
  await wakeups.start();
  const inFlight = new Map<string, Promise<void>>();
  const completer = batchedCompleter(deps.db, deps.log);
  const heartbeat = setInterval(
    () => {
      extendLeases(deps.db, owner, [...inFlight.keys()], leaseMs).catch((error: unknown) =>
        deps.log.warn({ err: error }, 'could not renew delivery leases'),
      );
    },
    Math.max(50, Math.floor(leaseMs / 3)),
  );
  let failures = 0;
  try {
    while (!signal.aborted) {
      const seen = wakeups.generation;
      let claimed: string[] = [];
      const capacity = concurrency - inFlight.size;
      if (capacity > 0) {
        try {
          claimed = await claimDeliveries(deps.db, { owner, now: deps.now(), limit: capacity, leaseMs });
          failures = 0;
        } catch (error) {
          failures++;
          deps.log.error({ err: error }, 'could not claim deliveries');
          await sleep(Math.min(30_000, 500 * 2 ** failures), undefined, { signal }).catch(() => {});
          continue;
        }
      }
      const context: ClaimContext = {
        alerts: new Map(),
        lookups: memoizedLookups(),
        complete: (id) => completer.complete(id),
      };
      for (const id of claimed) {
        const task = attemptDelivery(deps, id, owner, context)
          .then(() => undefined)
          .catch(async (error: unknown) => {
            deps.log.error({ err: error, deliveryId: id }, 'delivery attempt crashed; retrying in 30 s');
            const later = new Date(deps.now().getTime() + 30_000);
            await rescheduleDelivery(deps.db, owner, id, later).catch(() => undefined);
          })
          .finally(() => {
            inFlight.delete(id);
            wakeups.wake();
          });
        inFlight.set(id, task);
      }
      if (claimed.length === capacity && capacity > 0) continue;
      await wakeups.wait(seen, pollMs, signal);
    }
  } finally {
    clearInterval(heartbeat);
    await Promise.all(inFlight.values());
    await completer.close();
    await wakeups.stop();
  }
}
