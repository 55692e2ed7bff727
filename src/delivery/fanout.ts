import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { type Alert, loadAlert } from '../alerts/alert.ts';
import type { Db, Queryable } from '../db/db.ts';
import { whileLeader } from '../db/leader.ts';
import { comparePositions, type EventStore, type RecordedEvent, START } from '../eventstore/port.ts';
import { channelsOf } from './channels.ts';
import type { AlertSnapshot, DeliveryCreatedData } from './delivery.ts';
import { deliveryStream } from './delivery.ts';
import { type DeliveryIds, deliveryEventId } from './ids.ts';
import {
  ALERT_MATCH_SUMMARIZED,
  ALERT_MATCHED,
  type MatchedData,
  type MatchSummarizedData,
} from './matched.ts';
import { enqueueDeliveries, QUEUE_CHANNEL } from './queue.ts';
import { announce } from './wakeup.ts';

/** DeliveryCreated appends per appendMany call. */
const APPEND_CHUNK = 250;

/** The fan-out consumer's checkpoint (in projection_checkpoints) and lock. */
export const FANOUT = 'delivery-fanout';

export interface FanoutDeps {
  db: Db;
  store: EventStore;
  ids: DeliveryIds;
  now(): Date;
  log: Logger;
}

export const alertSnapshot = (alert: Alert): AlertSnapshot => ({
  id: alert.id,
  kind: alert.kind,
  title: alert.title,
  project_id: alert.projectId,
  organization_id: alert.organizationId,
});

async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

export async function readCheckpoint(q: Queryable, name: string): Promise<string> {
  await q.query(
    'insert into projection_checkpoints (name, position) values ($1, $2) on conflict (name) do nothing',
    [name, START],
  );
  const { rows } = await q.query<{ position: string }>(
    'select position from projection_checkpoints where name = $1',
    [name],
  );
  return rows[0]?.position ?? START;
}

/**
 * Fans out one batch of AlertMatched / AlertMatchSummarized events and moves the checkpoint from
 * `from` to `to`. Order matters for crash safety without a shared transaction: the DeliveryCreated
 * events are appended first (deterministic ids: a repeat is a no-op), then queue rows, match
 * copies and the checkpoint commit together. A crash in between repeats the batch harmlessly.
 * False when another process moved the checkpoint (nothing was written by this call's transaction).
 */
export async function fanOutBatch(
  deps: FanoutDeps,
  from: string,
  to: string,
  events: readonly RecordedEvent[],
): Promise<boolean> {
  const matched = events.filter((e) => e.type === ALERT_MATCHED && !(e.data as MatchedData).isBackfilled);
  const summaries = events
    .filter((e) => e.type === ALERT_MATCH_SUMMARIZED)
    .map((e) => e.data as MatchSummarizedData);
  const alertIds = [...new Set(matched.map((e) => (e.data as MatchedData).alertId))];
  const states = new Map(
    await mapLimited(alertIds, 16, async (id) => [id, (await loadAlert(deps.store, id)).state] as const),
  );

  const now = deps.now();
  const copies: Array<{
    match_id: string;
    alert_id: string;
    detected_at: string;
    digest_cadence: string | null;
    data: MatchedData;
  }> = [];
  const creations: Array<{ created: DeliveryCreatedData; event: RecordedEvent }> = [];
  for (const event of matched) {
    const match = event.data as MatchedData;
    const state = states.get(match.alertId);
    const alert = state && state.status !== 'initial' ? state.alert : undefined;
    if (!alert)
      deps.log.warn(
        { matchId: match.matchId, alertId: match.alertId },
        'match of an unknown alert: nothing to deliver',
      );
    const cadence = alert?.deliveryCadence ?? 'REALTIME';
    copies.push({
      match_id: match.matchId,
      alert_id: match.alertId,
      detected_at: match.detectedAt,
      digest_cadence: cadence === 'REALTIME' ? null : cadence,
      data: match,
    });
    if (!alert || cadence !== 'REALTIME') continue;
    for (const plan of channelsOf(alert.notifications)) {
      creations.push({
        event,
        created: {
          deliveryId: deps.ids.realtime(match.matchId, plan.key),
          type: 'alert.match',
          alert: alertSnapshot(alert),
          channel: plan.channel,
          target: plan.target,
          cadence: 'REALTIME',
          matchIds: [match.matchId],
          createdAt: now.toISOString(),
        },
      });
    }
  }

  const appends = creations.map(({ created, event }) => ({
    streamId: deliveryStream(created.deliveryId),
    events: [{ id: deliveryEventId(created.deliveryId, 'created'), type: 'DeliveryCreated', data: created }],
    options: {
      ...(event.metadata.correlationId !== undefined && { correlationId: event.metadata.correlationId }),
      causationId: event.id,
    },
  }));
  for (let i = 0; i < appends.length; i += APPEND_CHUNK) {
    const chunk = appends.slice(i, i + APPEND_CHUNK);
    // One transaction per chunk; should the store refuse it, each on its own (a repeat is a no-op).
    await deps.store
      .appendMany(chunk)
      .catch(() => mapLimited(chunk, 32, (a) => deps.store.append(a.streamId, a.events, a.options)));
  }

  const moved = await deps.db.transaction(async (tx) => {
    const cas = await tx.query(
      'update projection_checkpoints set position = $3, updated_at = now() where name = $1 and position = $2',
      [FANOUT, from, to],
    );
    if (cas.rowCount === 0) return false;
    if (copies.length > 0) {
      await tx.query(
        `insert into delivery_match_copies (match_id, alert_id, detected_at, digest_cadence, data)
         select r.match_id, r.alert_id, r.detected_at, r.digest_cadence, r.data
           from jsonb_to_recordset($1::jsonb) as r(match_id text, alert_id text, detected_at timestamptz,
                                                   digest_cadence text, data jsonb)
         on conflict (match_id) do nothing`,
        [JSON.stringify(copies)],
      );
    }
    if (summaries.length > 0) {
      await tx.query(
        `update delivery_match_copies c set summary = s.summary
           from unnest($1::text[], $2::text[]) as s(match_id, summary)
          where c.match_id = s.match_id`,
        [summaries.map((s) => s.matchId), summaries.map((s) => s.summary)],
      );
    }
    await enqueueDeliveries(
      tx,
      creations.map(({ created }) => ({ deliveryId: created.deliveryId, dueAt: now })),
    );
    return true;
  });
  if (moved && creations.length > 0) await announce(deps.db, QUEUE_CHANNEL);
  return moved;
}

export const FANOUT_EVENT_TYPES = [ALERT_MATCHED, ALERT_MATCH_SUMMARIZED] as const;

/** Fans out everything after the checkpoint up to the head, then returns (tests, tools). */
export async function catchUpFanout(deps: FanoutDeps, batchSize = 500): Promise<number> {
  let applied = 0;
  for (;;) {
    const from = await readCheckpoint(deps.db, FANOUT);
    const page = await deps.store.readAll({ after: from, eventTypes: FANOUT_EVENT_TYPES, limit: batchSize });
    if (page.lastPosition === from) return applied;
    if (await fanOutBatch(deps, from, page.lastPosition, page.events)) applied += page.events.length;
  }
}

/**
 * True when every AlertMatched committed so far has been fanned out: also those still held back
 * from readers by an older open transaction (readAll alone would call those "nothing to read").
 */
export async function fanoutCaughtUp(deps: Pick<FanoutDeps, 'db' | 'store'>): Promise<boolean> {
  const from = await readCheckpoint(deps.db, FANOUT);
  const head = await deps.store.headPosition?.({ eventTypes: [ALERT_MATCHED] });
  if (head !== undefined) return comparePositions(from, head) >= 0;
  const page = await deps.store.readAll({ after: from, eventTypes: [ALERT_MATCHED], limit: 1 });
  return page.events.length === 0;
}

class CheckpointMoved extends Error {}

/**
 * Runs `follow` while holding the named lock; standbys retry every `lockRetryMs`. A failure
 * backs off (1 s doubling to 30 s) and starts again.
 */
export async function whileLocked(
  db: Db,
  name: string,
  signal: AbortSignal,
  log: Logger,
  follow: () => Promise<void>,
  lockRetryMs = 2000,
): Promise<void> {
  let delay = 1000;
  const onError = (error: unknown) => log.error({ err: error }, `could not take the ${name} lock`);
  await whileLeader(db, name, { signal, retryMs: lockRetryMs, onError }, async () => {
    try {
      await follow();
      delay = 1000;
    } catch (error) {
      if (error instanceof CheckpointMoved) return;
      log.error({ err: error }, `${name} stopped with an error; restarting`);
      await sleep(delay, undefined, { signal }).catch(() => {});
      delay = Math.min(delay * 2, 30_000);
    }
  });
}

/** The fan-out consumer: one process at a time follows AlertMatched from its checkpoint. */
export async function runFanout(deps: FanoutDeps, signal: AbortSignal, options: { batchSize?: number } = {}) {
  await whileLocked(deps.db, FANOUT, signal, deps.log, async () => {
    let checkpoint = await readCheckpoint(deps.db, FANOUT);
    const subscription = deps.store.subscribe({
      after: checkpoint,
      eventTypes: FANOUT_EVENT_TYPES,
      limit: options.batchSize ?? 500,
      signal,
      handle: async (events, lastPosition) => {
        if (!(await fanOutBatch(deps, checkpoint, lastPosition, events))) throw new CheckpointMoved();
        checkpoint = lastPosition;
      },
    });
    await subscription.done;
  });
}
