import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { type AlertState, loadAlert } from '../../alerts/alert.ts';
import type { Db } from '../../db/db.ts';
import { Wakeup } from '../../db/wakeup.ts';
import type { EventStore, RecordedEvent } from '../../eventstore/port.ts';
import { type DeliveryOutcome, metrics } from '../../observability/metrics.ts';
import { decide, toNewEvents } from '../decide.ts';
import {
  type DeliveryEvent,
  type DeliveryState,
  type DeliveryStatus,
  deliveryStream,
  foldDelivery,
  isFinal,
  toDeliveryEvent,
} from '../delivery.ts';
import { loadMatches, type MatchedData } from '../matched.ts';
import { type ClaimedDelivery, claimDeliveries, extendLeases, QUEUE_CHANNEL } from './queue.ts';
import { createRecorder, type Recorder, type Recording } from './recorder.ts';
import { crashDelay, crashLimit, type RetrySchedule } from './schedule.ts';
import { type ChannelDeps, type Lookups, memoizedLookups, prepareAttempt } from './send.ts';

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

/** crashed: the attempt threw; the crash is counted on its queue row (docs/delivery.md, Crashed attempts). */
export type AttemptResult = 'finished' | 'rescheduled' | 'lost' | 'crashed';

/**
 * What the deliveries of one claim share (a delivery that crashed before has its own), read once
 * after the claim and before any of its sends: each alert's state (from its stream), each
 * connection (and its decrypted secret), and the AlertMatched data of all their matches. SKIPPED rules are therefore judged as of the claim: a
 * pause, deletion or revocation committed before a delivery was claimed is always honoured.
 */
interface ClaimBatch {
  alerts: Map<string, Promise<AlertState>>;
  lookups: Lookups;
  matches: Promise<Map<string, MatchedData>>;
}

function alertState(deps: DelivererDeps, batch: ClaimBatch, alertId: string): Promise<AlertState> {
  let state = batch.alerts.get(alertId);
  if (!state) {
    state = loadAlert(deps.store, alertId).then((loaded) => loaded.state);
    batch.alerts.set(alertId, state);
  }
  return state;
}

interface Loaded {
  state: DeliveryState;
  last: RecordedEvent | undefined;
}

async function loadDelivery(deps: DelivererDeps, deliveryId: string): Promise<Loaded> {
  const recorded = await deps.store.readStream(deliveryStream(deliveryId));
  return {
    state: foldDelivery(recorded.map(toDeliveryEvent)),
    last: recorded.at(-1),
  };
}

/** Whether a loaded delivery has an attempt to make now. */
function isDue(deps: DelivererDeps, loaded: Loaded): boolean {
  const { state } = loaded;
  if (state.status === 'initial' || isFinal(state.status)) return false;
  const next = state.delivery.nextAttemptAt;
  return !(next && new Date(next) > deps.now());
}

/**
 * Starts the next attempt of each claimed delivery; one promise per delivery, in order, which
 * never rejects for an attempt that crashed: the crash is counted on its queue row instead
 * (docs/delivery.md, Crashed attempts). The stream is the truth: its fold says whether anything is
 * left to do and when; the outcome is appended with the revision that was read and with
 * deterministic event ids, so a step repeated after a crash, or raced by another process whose
 * lease outlived ours, records nothing twice. Outcomes and queue rows are written in batches by
 * `recorder`.
 */
export function startAttempts(
  deps: DelivererDeps,
  claimed: readonly ClaimedDelivery[],
  recorder: Recorder,
): Promise<AttemptResult>[] {
  // A delivery that crashed before shares no reads with the others, so that whatever crashes its
  // attempt cannot spend their crash budgets too.
  const together = claimed.filter((c) => c.crashes === 0);
  const limit = crashLimit(deps.schedule);
  const started = new Map<string, Promise<AttemptResult>>();
  for (const group of [together, ...claimed.filter((c) => c.crashes > 0).map((c) => [c])]) {
    const attempts = startBatch(deps, group, recorder, limit);
    group.forEach((c, i) => {
      started.set(c.deliveryId, attempts[i]!);
    });
  }
  return claimed.map((c) => started.get(c.deliveryId)!);
}

function startBatch(
  deps: DelivererDeps,
  claimed: readonly ClaimedDelivery[],
  recorder: Recorder,
  limit: number,
): Promise<AttemptResult>[] {
  const loads = claimed.map((c) => loadDelivery(deps, c.deliveryId));
  const settled = Promise.allSettled(loads);
  const batch: ClaimBatch = {
    alerts: new Map(),
    lookups: memoizedLookups(),
    matches: settled.then((results) => {
      // A webhook body carries whole matches; email and chat quote only the mention lines.
      const whole: string[] = [];
      const mentions: string[] = [];
      results.forEach((r, i) => {
        if (r.status !== 'fulfilled' || claimed[i]!.crashes >= limit || !isDue(deps, r.value)) return;
        if (r.value.state.status === 'initial') return;
        const { created } = r.value.state.delivery;
        (created.channel === 'WEBHOOK' ? whole : mentions).push(...created.matchIds);
      });
      return loadMatches(deps, { whole, mentions });
    }),
  };
  // Nothing waits on it when no delivery is due, or when every one of them failed to load.
  batch.matches.catch(() => undefined);
  return claimed.map((c, i) =>
    attempt(deps, c, loads[i]!, batch, recorder, limit).catch((error: unknown) =>
      crashed(deps, c, error, recorder, limit),
    ),
  );
}

/**
 * An attempt threw instead of recording an outcome: its row is rescheduled after a delay that
 * doubles with each crash in a row. The crash that spends the budget makes it due at once, so that
 * the next claim ends the delivery; should that end fail too (the store is down), its retries back
 * off again from the first delay. The count is on the row: it outlives the process.
 */
async function crashed(
  deps: DelivererDeps,
  claimed: ClaimedDelivery,
  error: unknown,
  recorder: Recorder,
  limit: number,
): Promise<AttemptResult> {
  const { deliveryId } = claimed;
  const crashes = claimed.crashes + 1;
  const backoff = crashes > limit ? crashes - limit : crashes;
  const delayMs = crashes === limit ? 0 : crashDelay(deps.schedule, backoff, deps.random);
  deps.log.error(
    { err: error, deliveryId, crashes, limit, delayMs },
    crashes < limit
      ? 'delivery attempt crashed; retrying after a delay'
      : crashes === limit
        ? 'delivery attempt crashed; its crashes spent its budget, so its next claim ends it'
        : 'could not end a delivery whose crashes spent its budget; retrying after a delay',
  );
  metrics.deliveryCrashes.inc();
  const dueAt = new Date(deps.now().getTime() + delayMs);
  await recorder.record({ deliveryId, queue: { kind: 'reschedule', dueAt, crashes } });
  return 'crashed';
}

async function attempt(
  deps: DelivererDeps,
  claimed: ClaimedDelivery,
  loading: Promise<Loaded>,
  batch: ClaimBatch,
  recorder: Recorder,
  limit: number,
): Promise<AttemptResult> {
  const { deliveryId } = claimed;
  const loaded = await loading;
  const { state, last } = loaded;
  if (state.status === 'initial') {
    deps.log.warn({ deliveryId }, 'queued delivery has no DeliveryCreated event; dropping it from the queue');
    await recorder.record({ deliveryId, queue: { kind: 'complete' } });
    return 'finished';
  }
  const delivery = state.delivery;
  if (isFinal(state.status)) {
    await recorder.record({ deliveryId, queue: { kind: 'complete' } });
    return 'finished';
  }
  let decided: DeliveryEvent[];
  if (claimed.crashes >= limit) {
    decided = decide({ type: 'GiveUpCrashed', data: { crashes: claimed.crashes, now: deps.now() } }, state);
  } else {
    if (!isDue(deps, loaded)) {
      await recorder.record({
        deliveryId,
        queue: { kind: 'reschedule', dueAt: new Date(delivery.nextAttemptAt!), attempts: delivery.attempts },
      });
      return 'rescheduled';
    }
    decided = await attemptNow(deps, state, batch);
  }
  const log = deps.log.child({
    deliveryId,
    correlationId: last!.metadata.correlationId,
    causationId: last!.id,
  });

  const next = foldDelivery(decided, state);
  const append: Recording['append'] = {
    streamId: deliveryStream(deliveryId),
    events: toNewEvents(decided),
    options: {
      expectedRevision: last!.revision,
      ...(last!.metadata.correlationId !== undefined && { correlationId: last!.metadata.correlationId }),
      causationId: last!.id,
    },
  };
  if (next.status === 'initial' || isFinal(next.status)) {
    if ((await recorder.record({ deliveryId, append, queue: { kind: 'complete' } })) === 'lost')
      return 'lost';
    log.info({ status: next.status }, 'delivery finished');
    if (next.status !== 'initial') countOutcome(delivery.created.channel, FINAL_OUTCOME[next.status]);
    return 'finished';
  }
  const retry = next.delivery;
  const dueAt = new Date(retry.nextAttemptAt ?? deps.now());
  const queue = { kind: 'reschedule', dueAt, attempts: retry.attempts } as const;
  if ((await recorder.record({ deliveryId, append, queue })) === 'lost') return 'lost';
  countOutcome(delivery.created.channel, 'retry_scheduled');
  log.info(
    { attempt: retry.attempts, nextAttemptAt: retry.nextAttemptAt, error: retry.lastError },
    'delivery attempt failed',
  );
  return 'rescheduled';
}

/** Applies the SKIPPED rules and, when none applies, makes the attempt: the events that decides. */
async function attemptNow(
  deps: DelivererDeps,
  state: Exclude<DeliveryState, { status: 'initial' }>,
  batch: ClaimBatch,
): Promise<DeliveryEvent[]> {
  const delivery = state.delivery;
  const [alert, matches] = await Promise.all([
    alertState(deps, batch, delivery.created.alert.id),
    batch.matches,
  ]);
  const preparation = await prepareAttempt(deps.channels, delivery, alert, matches, batch.lookups);
  const skipped = decide(
    { type: 'ScreenDelivery', data: { facts: preparation.facts, now: deps.now() } },
    state,
  );
  if (skipped.length > 0) return skipped;
  const outcome = await preparation.send();
  return decide(
    {
      type: 'RecordAttempt',
      data: {
        outcome,
        now: deps.now(),
        schedule: deps.schedule,
        ...(deps.random && { random: deps.random }),
      },
    },
    state,
  );
}

const FINAL_OUTCOME: Partial<Record<DeliveryStatus, DeliveryOutcome>> = {
  sent: 'delivered',
  failed: 'failed',
  abandoned: 'abandoned',
  skipped: 'skipped',
};

function countOutcome(channel: string, outcome: DeliveryOutcome | undefined) {
  if (outcome) metrics.deliveries.inc({ channel: channel.toLowerCase(), outcome });
}

/**
 * The deliverer's queue worker: claims due deliveries in batches (several processes may run it at
 * once), keeps up to `concurrency` attempts in flight, records their outcomes in batches, renews
 * their leases, and sleeps until a notification, free capacity with work left, or the poll interval.
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
  // Claim when a quarter of the slots is free: one round trip fills many, and a lone completion
  // does not cost a claim of its own.
  const refillAt = Math.max(1, Math.floor(concurrency / 4));
  const wakeups = new Wakeup(deps.db, QUEUE_CHANNEL);
  await wakeups.start();
  const inFlight = new Map<string, Promise<void>>();
  const recorder = createRecorder(deps, owner);
  const heartbeat = setInterval(
    () => {
      extendLeases(deps.db, owner, [...inFlight.keys()], leaseMs).catch((error: unknown) =>
        deps.log.warn({ err: error }, 'could not renew delivery leases'),
      );
    },
    Math.max(50, Math.floor(leaseMs / 3)),
  );
  let failures = 0;
  // The last claim took all it asked for: more may be due, so a completion looks again.
  let backlog = false;
  try {
    while (!signal.aborted) {
      const seen = wakeups.generation;
      const free = concurrency - inFlight.size;
      if (free >= refillAt || (free > 0 && inFlight.size === 0)) {
        let claimed: ClaimedDelivery[];
        try {
          claimed = await claimDeliveries(deps.db, { owner, now: deps.now(), limit: free, leaseMs });
          failures = 0;
        } catch (error) {
          failures++;
          deps.log.error({ err: error }, 'could not claim deliveries');
          await sleep(Math.min(30_000, 500 * 2 ** failures), undefined, { signal }).catch(() => {});
          continue;
        }
        // A delivery still being sent here whose lease lapsed (a stalled event loop) comes back
        // in a claim: the attempt in flight records it; starting another would send it twice.
        const fresh = claimed.filter((c) => !inFlight.has(c.deliveryId));
        const attempts = startAttempts(deps, fresh, recorder);
        fresh.forEach(({ deliveryId }, i) => {
          const task = attempts[i]!.then(() => undefined)
            // Only a crash that could not even be counted gets here: the row keeps its lease until
            // the lease runs out, then comes back.
            .catch((error: unknown) =>
              deps.log.error({ err: error, deliveryId }, 'could not record a crashed delivery attempt'),
            )
            .finally(() => {
              inFlight.delete(deliveryId);
              if (backlog) wakeups.wake();
            });
          inFlight.set(deliveryId, task);
        });
        backlog = claimed.length === free;
        if (backlog) continue;
      }
      await wakeups.wait(seen, pollMs, signal);
    }
  } finally {
    clearInterval(heartbeat);
    await Promise.all(inFlight.values());
    await recorder.close();
    await wakeups.stop();
  }
}
