import type { Logger } from 'pino';
import { type Alert, loadAlert } from '../../src/alerts/alert.ts';
import type { Db, Queryable } from '../../src/db/db.ts';
import { notify } from '../../src/db/wakeup.ts';
import { channelsOf } from '../../src/delivery/channels.ts';
import type { AlertSnapshot, DeliveryCreatedData } from '../../src/delivery/delivery.ts';
import { deliveryStream } from '../../src/delivery/delivery.ts';
import { type DeliveryIds, deliveryEventId } from '../../src/delivery/ids.ts';
import {
  ALERT_MATCH_SUMMARIZED,
  ALERT_MATCHED,
  type MatchedData,
  type MatchSummarizedData,
} from '../../src/delivery/matched.ts';
import { enqueueDeliveries, QUEUE_CHANNEL } from '../../src/delivery/queue/queue.ts';
import { comparePositions, type EventStore, type RecordedEvent } from '../../src/eventstore/port.ts';
import { readCheckpoint } from '../../src/subscriptions/checkpoints.ts';
import { catchUpSubscription, runSubscription } from '../../src/subscriptions/runner.ts';
import type { TransactionalSubscriber } from '../../src/subscriptions/subscriber.ts';

/** DeliveryCreated appends per appendMany call. */
const APPEND_CHUNK = 250;

/** The fan-out consumer's checkpoint (in projection_checkpoints) and lock. */
export const FANOUT = 'delivery-fanout';

export { readCheckpoint } from '../../src/subscriptions/checkpoints.ts';

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

interface FanoutPlan {
  now: Date;
  copies: Array<{
    match_id: string;
    alert_id: string;
    detected_at: string;
    digest_cadence: string | null;
    data: MatchedData;
  }>;
  summaries: MatchSummarizedData[];
  creations: Array<{ created: DeliveryCreatedData; event: RecordedEvent }>;
}

/**
 * Outside the transaction: reads the matched alerts from their streams and appends the
 * DeliveryCreated events (deterministic ids: a repeated batch appends nothing new).
 */
async function planFanout(deps: FanoutDeps, events: readonly RecordedEvent[]): Promise<FanoutPlan> {
  const matched = events.filter((e) => e.type === ALERT_MATCHED && !(e.data as MatchedData).isBackfilled);
  const summaries = events
    .filter((e) => e.type === ALERT_MATCH_SUMMARIZED)
    .map((e) => e.data as MatchSummarizedData);
  const alertIds = [...new Set(matched.map((e) => (e.data as MatchedData).alertId))];
  const states = new Map(
    await mapLimited(alertIds, 16, async (id) => [id, (await loadAlert(deps.store, id)).state] as const),
  );

  const now = deps.now();
  const copies: FanoutPlan['copies'] = [];
  const creations: FanoutPlan['creations'] = [];
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

  return { now, copies, summaries, creations };
}

/** In the transaction with the checkpoint: match copies, summaries and queue rows. */
async function applyFanout(tx: Queryable, { now, copies, summaries, creations }: FanoutPlan): Promise<void> {
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
    creations.map(({ created }) => ({
      deliveryId: created.deliveryId,
      dueAt: now,
      organizationId: created.alert.organization_id,
    })),
  );
  if (creations.length > 0) await notify(tx, QUEUE_CHANNEL);
}

/**
 * The fan-out as a transactional subscriber of AlertMatched / AlertMatchSummarized: the
 * DeliveryCreated appends first, then queue rows, match copies and the checkpoint together. A crash
 * in between repeats the batch harmlessly.
 */
export function fanoutSubscriber(deps: FanoutDeps): TransactionalSubscriber<FanoutPlan> {
  return {
    mode: 'transactional',
    name: FANOUT,
    eventTypes: FANOUT_EVENT_TYPES,
    batchSize: 500,
    prepare: (events) => planFanout(deps, events),
    handle: (tx, _events, plan) => applyFanout(tx, plan),
  };
}

const FANOUT_EVENT_TYPES = [ALERT_MATCHED, ALERT_MATCH_SUMMARIZED] as const;

/** Fans out everything after the checkpoint up to the head, then returns (tests, tools). */
export const catchUpFanout = (deps: FanoutDeps, batchSize = 500): Promise<number> =>
  catchUpSubscription(deps.db, deps.store, fanoutSubscriber(deps), { batchSize, log: deps.log });

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

/** The fan-out consumer: one process at a time follows AlertMatched from its checkpoint. */
export async function runFanout(deps: FanoutDeps, signal: AbortSignal, options: { batchSize?: number } = {}) {
  await runSubscription(deps.db, deps.store, fanoutSubscriber(deps), {
    signal,
    log: deps.log,
    onError: (error) => deps.log.error({ err: error }, `${FANOUT} attempt failed; retrying`),
    ...(options.batchSize !== undefined && { batchSize: options.batchSize }),
  });
}
