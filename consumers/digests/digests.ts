import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { type Alert, loadAlert } from '../../src/alerts/alert.ts';
import { type MatchFacts, passesFilters } from '../../src/alerts/filters.ts';
import type { Db } from '../../src/db/db.ts';
import { whileLocked } from '../../src/db/leader.ts';
import { notify } from '../../src/db/wakeup.ts';
import { type ChannelPlan, channelsOf } from '../../src/delivery/channels.ts';
import { decide, toNewEvents } from '../../src/delivery/decide.ts';
import {
  type DeliveryCreatedData,
  type DeliveryState,
  type DigestCadence,
  deliveryStream,
  foldDelivery,
  initialDeliveryState,
  toDeliveryEvent,
} from '../../src/delivery/delivery.ts';
import type { DeliveryIds } from '../../src/delivery/ids.ts';
import { enqueueDeliveries, QUEUE_CHANNEL, withdrawDelivery } from '../../src/delivery/queue/queue.ts';
import { ConflictError, WrongExpectedRevisionError } from '../../src/errors.ts';
import type { EventStore } from '../../src/eventstore/port.ts';
import { alertSnapshot, fanoutCaughtUp } from '../delivery-fanout/fanout.ts';
import { type DigestWindow, previousWindow, windowContaining, windowStarting } from './windows.ts';

export const DIGESTS = 'delivery-digests';
const CADENCES: readonly DigestCadence[] = ['DAILY', 'WEEKLY'];

export interface DigestDeps {
  db: Db;
  store: EventStore;
  ids: DeliveryIds;
  now(): Date;
  log: Logger;
  /**
   * How long after a window closes its digest is made, so a match detected just before the
   * boundary and appended just after it is still in. Default 30 s.
   */
  graceMs?: number;
}

interface CandidateRow {
  match_id: string;
  detected_at: Date;
  /** What the filters read: the match's windows, nearly all of its size, are left in the table. */
  facts: MatchFacts;
  summary: string | null;
}

async function readDelivery(store: EventStore, id: string) {
  const recorded = await store.readStream(deliveryStream(id));
  const state = foldDelivery(recorded.map(toDeliveryEvent));
  return { state, revision: recorded.at(-1)?.revision ?? -1 };
}

/** A digest that failed (retrying or out of attempts) is superseded; one never tried is left alone. */
const hasFailed = (state: DeliveryState) =>
  state.status === 'failed' || (state.status === 'retrying' && state.delivery.attempts > 0);

/**
 * Makes every digest due by now, window by window per cadence, and returns how many windows it
 * closed. Idempotent and safe to run from several processes: each digest's id is derived from
 * (alert, channel, cadence, window), and a window is marked done only after its digests exist.
 */
export async function scheduleDueDigests(deps: DigestDeps): Promise<number> {
  const graceMs = deps.graceMs ?? 30_000;
  let closed = 0;
  let caughtUp: boolean | undefined;
  for (const cadence of CADENCES) {
    let start = await cursorOf(deps.db, cadence);
    if (!start) continue;
    for (;;) {
      const window = windowStarting(cadence, start);
      if (window.end.getTime() + graceMs > deps.now().getTime()) break;
      caughtUp ??= await fanoutCaughtUp(deps);
      if (!caughtUp) return closed;
      if (!(await closeWindow(deps, window))) return closed;
      await deps.db.query('update digest_cursors set next_window_start = $2 where cadence = $1', [
        cadence,
        window.end.toISOString(),
      ]);
      closed++;
      start = window.end;
    }
  }
  return closed;
}

/** The next window to close: stored, or (first run) the window of the oldest waiting match. */
async function cursorOf(db: Db, cadence: DigestCadence): Promise<Date | null> {
  const { rows } = await db.query<{ next_window_start: Date }>(
    'select next_window_start from digest_cursors where cadence = $1',
    [cadence],
  );
  if (rows[0]) return rows[0].next_window_start;
  const oldest = await db.query<{ at: Date | null }>(
    'select min(detected_at) as at from delivery_match_copies where digest_cadence = $1',
    [cadence],
  );
  const at = oldest.rows[0]?.at;
  if (!at) return null;
  const start = windowContaining(cadence, at).start;
  await db.query(
    'insert into digest_cursors (cadence, next_window_start) values ($1, $2) on conflict (cadence) do nothing',
    [cadence, start.toISOString()],
  );
  const { rows: again } = await db.query<{ next_window_start: Date }>(
    'select next_window_start from digest_cursors where cadence = $1',
    [cadence],
  );
  return again[0]?.next_window_start ?? null;
}

/** Makes the digests of one window for every alert with matches in it or the window before. False: try later. */
async function closeWindow(deps: DigestDeps, window: DigestWindow): Promise<boolean> {
  const before = previousWindow(window);
  const { rows } = await deps.db.query<{ alert_id: string }>(
    `select distinct alert_id from delivery_match_copies
      where digest_cadence = $1 and detected_at >= $2 and detected_at < $3 order by alert_id`,
    [window.cadence, before.start.toISOString(), window.end.toISOString()],
  );
  for (const { alert_id: alertId } of rows) {
    const { state } = await loadAlert(deps.store, alertId);
    if (state.status === 'initial') continue;
    const candidates = await deps.db.query<CandidateRow>(
      `select match_id, detected_at, data - 'windows' as facts, summary from delivery_match_copies
        where digest_cadence = $1 and alert_id = $2 and detected_at >= $3 and detected_at < $4
        order by detected_at, match_id`,
      [window.cadence, alertId, before.start.toISOString(), window.end.toISOString()],
    );
    for (const plan of channelsOf(state.alert.notifications)) {
      if (!(await makeDigest(deps, state.alert, plan, window, candidates.rows))) return false;
    }
  }
  return true;
}

async function makeDigest(
  deps: DigestDeps,
  alert: Alert,
  plan: ChannelPlan,
  window: DigestWindow,
  candidates: readonly CandidateRow[],
): Promise<boolean> {
  const done = await deps.db.query(
    'select 1 from digest_windows where alert_id = $1 and channel_key = $2 and cadence = $3 and window_start = $4',
    [alert.id, plan.key, window.cadence, window.start.toISOString()],
  );
  if (done.rowCount > 0) return true;
  const before = previousWindow(window);
  const id = deps.ids.digest(alert.id, plan.key, window.cadence, window.start);
  // The previous window's digest as recorded, not re-derived: after a key rotation the
  // derivation gives another id.
  const { rows: previousRows } = await deps.db.query<{ delivery_id: string }>(
    `select delivery_id from digest_windows
      where alert_id = $1 and channel_key = $2 and cadence = $3 and window_start = $4`,
    [alert.id, plan.key, window.cadence, before.start.toISOString()],
  );
  const previousId =
    previousRows[0]?.delivery_id ?? deps.ids.digest(alert.id, plan.key, window.cadence, before.start);

  // The digest before, if it failed, gives its own window's matches to this one and stops.
  let reselected = new Set<string>();
  const previous = await readDelivery(deps.store, previousId);
  if (previous.state.status !== 'initial' && hasFailed(previous.state)) {
    if (previous.state.status === 'retrying') {
      if (!(await withdrawDelivery(deps.db, previousId))) return false; // an attempt is in flight
      try {
        await deps.store.append(
          deliveryStream(previousId),
          toNewEvents(decide({ type: 'SupersedeDigest', data: { by: id, now: deps.now() } }, previous.state)),
          { expectedRevision: previous.revision },
        );
      } catch (error) {
        if (error instanceof WrongExpectedRevisionError || error instanceof ConflictError) return false;
        throw error;
      }
    }
    reselected = new Set(previous.state.delivery.created.matchIds);
  }

  const inWindow = (at: Date, w: DigestWindow) => at >= w.start && at < w.end;
  const chosen = candidates.filter(
    (c) =>
      passesFilters(c.facts, alert) &&
      (inWindow(c.detected_at, window) || (reselected.has(c.match_id) && inWindow(c.detected_at, before))),
  );
  let deliveryId: string | null = null;
  if (chosen.length > 0) {
    const summaries = Object.fromEntries(
      chosen.flatMap((c) => (c.summary === null ? [] : [[c.match_id, c.summary]])),
    );
    const created: DeliveryCreatedData = {
      deliveryId: id,
      type: 'alert.digest',
      alert: alertSnapshot(alert),
      channel: plan.channel,
      target: plan.target,
      cadence: window.cadence,
      window: { start: window.start.toISOString(), end: window.end.toISOString() },
      matchIds: chosen.map((c) => c.match_id),
      ...(reselected.size > 0 && { reselectedFrom: previousId }),
      ...(Object.keys(summaries).length > 0 && { summaries }),
      createdAt: deps.now().toISOString(),
    };
    await deps.store.append(
      deliveryStream(id),
      toNewEvents(decide({ type: 'CreateDelivery', data: created }, initialDeliveryState())),
    );
    await enqueueDeliveries(deps.db, [
      { deliveryId: id, dueAt: deps.now(), organizationId: alert.organizationId },
    ]);
    deliveryId = id;
  }
  await deps.db.query(
    `insert into digest_windows (alert_id, channel_key, cadence, window_start, delivery_id)
     values ($1, $2, $3, $4, $5) on conflict do nothing`,
    [alert.id, plan.key, window.cadence, window.start.toISOString(), deliveryId],
  );
  if (deliveryId) await notify(deps.db, QUEUE_CHANNEL);
  return true;
}

/** The digest scheduler: one process at a time closes due windows, checking every `tickMs`. */
export async function runDigestScheduler(
  deps: DigestDeps,
  signal: AbortSignal,
  options: { tickMs?: number } = {},
) {
  const tickMs = options.tickMs ?? 1000;
  await whileLocked(deps.db, DIGESTS, signal, deps.log, async () => {
    while (!signal.aborted) {
      await scheduleDueDigests(deps);
      await sleep(tickMs, undefined, { signal }).catch(() => {});
    }
  });
}
