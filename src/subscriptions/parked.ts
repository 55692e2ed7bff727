import type { Queryable } from '../db/db.ts';
import type { RecordedEvent } from '../eventstore/port.ts';

/** An event a subscription could not handle after its retries (docs/event-store.md, "Parked events"). */
export interface ParkedEvent {
  subscription: string;
  position: string;
  eventId: string;
  type: string;
  streamId: string;
  error: string;
  attempts: number;
  parkedAt: Date;
  lastAttemptAt: Date;
}

interface ParkedRow {
  subscription: string;
  position: string;
  event_id: string;
  type: string;
  stream_id: string;
  error: string;
  attempts: number;
  parked_at: Date;
  last_attempt_at: Date;
}

/** Longest error message kept: enough to diagnose, never a whole payload. */
const ERROR_CHARS = 2000;

export const errorMessage = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).slice(0, ERROR_CHARS);

/** Parks an event, or counts another failed attempt of one already parked. */
export async function parkEvent(
  q: Queryable,
  subscription: string,
  event: RecordedEvent,
  error: unknown,
  attempts: number,
): Promise<void> {
  await q.query(
    `insert into parked_events (subscription, position, event_id, type, stream_id, error, attempts)
     values ($1, $2, $3, $4, $5, $6, $7)
     on conflict (subscription, position) do update
       set error = excluded.error, attempts = parked_events.attempts + excluded.attempts, last_attempt_at = now()`,
    [subscription, event.position, event.id, event.type, event.streamId, errorMessage(error), attempts],
  );
}

export async function unparkEvent(q: Queryable, subscription: string, position: string): Promise<void> {
  await q.query('delete from parked_events where subscription = $1 and position = $2', [
    subscription,
    position,
  ]);
}

/** Forgets every parked event of a subscription (its rebuild replays them all). */
export async function clearParked(q: Queryable, subscription: string): Promise<void> {
  await q.query('delete from parked_events where subscription = $1', [subscription]);
}

/** The parked events of one subscription (all when omitted), oldest position first per subscription. */
export async function listParked(q: Queryable, subscription?: string): Promise<ParkedEvent[]> {
  const { rows } = await q.query<ParkedRow>(
    `select * from parked_events where $1::text is null or subscription = $1
      order by subscription, parked_at, position`,
    [subscription ?? null],
  );
  return rows.map((row) => ({
    subscription: row.subscription,
    position: row.position,
    eventId: row.event_id,
    type: row.type,
    streamId: row.stream_id,
    error: row.error,
    attempts: row.attempts,
    parkedAt: new Date(row.parked_at),
    lastAttemptAt: new Date(row.last_attempt_at),
  }));
}

/** Parked events per subscription, read from the table (every process sees the same counts). */
export async function parkedCounts(q: Queryable): Promise<Map<string, number>> {
  const { rows } = await q.query<{ subscription: string; n: number }>(
    'select subscription, count(*)::int as n from parked_events group by subscription',
  );
  return new Map(rows.map((row) => [row.subscription, row.n]));
}
