import type { Logger } from 'pino';
import type { Db } from '../db/db.ts';
import type { RecordedEvent } from '../eventstore/port.ts';
import { retry } from '../retry.ts';
import { moveCheckpoint } from './checkpoints.ts';
import { errorMessage, parkEvent } from './parked.ts';
import type { Subscriber } from './subscriber.ts';

/** How a failing batch is retried before its poison event is parked (docs/event-store.md). */
export interface RetryPolicy {
  /** Retries of a failing batch, and then of each of its events, before parking. Default 4. */
  retries?: number;
  /** First wait between retries, in ms; doubles, randomized 1–2×. Default 500. */
  retryDelayMs?: number;
  /** Longest wait between retries, in ms. Default 30 000. */
  maxRetryDelayMs?: number;
}

export interface DeliverContext {
  db: Db;
  subscriber: Subscriber;
  signal: AbortSignal;
  policy: RetryPolicy;
  log?: Logger | undefined;
  /** Told of each failed attempt. */
  onError?: ((error: unknown) => void) | undefined;
}

// Connection-level failures say nothing about the event: the runner waits them out instead of
// parking (docs/event-store.md).
const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  '53300',
  '57P01',
  '57P02',
  '57P03',
]);
const TRANSIENT_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|Connection refused|connection error|event store is closed/i;

/** Whether `test` holds for the error or one of its causes (three deep). */
function anyCause(error: unknown, test: (error: Error & { code?: unknown }) => boolean, depth = 0): boolean {
  if (!(error instanceof Error) || depth > 3) return false;
  return test(error) || anyCause(error.cause, test, depth + 1);
}

const isTransient = (error: unknown) =>
  anyCause(
    error,
    (e) =>
      // A dependency that says it cannot answer now (an embeddings API): waited out, never parked.
      (e as { transient?: unknown }).transient === true ||
      (typeof e.code === 'string' && (TRANSIENT_CODES.has(e.code) || e.code.startsWith('08'))) ||
      TRANSIENT_MESSAGE.test(e.message),
  );

// SQLSTATE classes that refuse the data itself: 22 (a data exception: a value out of range, a text
// PostgreSQL cannot read) and 54 (a program limit: an index row too large). A retry against the same
// state and settings fails alike, so it is parked at its first failure (docs/event-store.md).
const isRefusedData = (error: unknown) =>
  anyCause(error, (e) => typeof e.code === 'string' && /^(22|54)/.test(e.code));

type Outcome = { ok: true; moved: boolean } | { ok: false; error: unknown; attempts: number };

/** One attempt: effects and the checkpoint move from `from` to `to`. False: the checkpoint moved. */
async function step(
  ctx: DeliverContext,
  from: string,
  to: string,
  events: readonly RecordedEvent[],
  restart: boolean,
): Promise<boolean> {
  const { subscriber: s, signal } = ctx;
  if (s.mode === 'transactional') {
    const prepared = s.prepare && events.length > 0 ? await s.prepare(events) : undefined;
    return ctx.db.transaction(async (tx) => {
      if (!(await moveCheckpoint(tx, s.name, from, to))) return false;
      if (events.length > 0) await s.handle(tx, events, prepared);
      return true;
    });
  }
  if (restart) await s.start?.(from, signal);
  if (events.length > 0) await s.handle(events, signal);
  // Stopping mid-batch leaves the checkpoint where it was: the batch runs again next time.
  signal.throwIfAborted();
  return moveCheckpoint(ctx.db, s.name, from, to);
}

async function attempt(
  ctx: DeliverContext,
  from: string,
  to: string,
  events: readonly RecordedEvent[],
): Promise<Outcome> {
  let attempts = 0;
  try {
    const moved = await retry(
      (n) => {
        attempts = n;
        return step(ctx, from, to, events, n > 1);
      },
      {
        retries: ctx.policy.retries ?? 4,
        backoff: { initialMs: ctx.policy.retryDelayMs ?? 500, maxMs: ctx.policy.maxRetryDelayMs ?? 30_000 },
        signal: ctx.signal,
        shouldRetry: (error) => !isTransient(error) && !isRefusedData(error),
        onFailedAttempt: (error) => ctx.onError?.(error),
      },
    );
    return { ok: true, moved };
  } catch (error) {
    ctx.signal.throwIfAborted();
    if (isTransient(error)) throw error;
    return { ok: false, error, attempts };
  }
}

async function park(
  ctx: DeliverContext,
  from: string,
  to: string,
  event: RecordedEvent,
  failure: { error: unknown; attempts: number },
): Promise<boolean> {
  const { subscriber: s } = ctx;
  const moved = await ctx.db.transaction(async (tx) => {
    if (!(await moveCheckpoint(tx, s.name, from, to))) return false;
    await parkEvent(tx, s.name, event, failure.error, failure.attempts);
    return true;
  });
  if (!moved) return false;
  ctx.log?.error(
    {
      subscription: s.name,
      eventId: event.id,
      position: event.position,
      type: event.type,
      attempts: failure.attempts,
      error: errorMessage(failure.error),
    },
    'event parked: its handler kept failing; the subscription moves on',
  );
  if (s.mode === 'effects-first') await s.start?.(to, ctx.signal);
  return true;
}

/**
 * Hands a batch to the subscriber and moves its checkpoint from `from` to `to`, retrying with
 * backoff. When the batch still fails, its events are taken one at a time so that only the event
 * that keeps failing is parked (with the checkpoint move, in one transaction) and every other one
 * is applied. False when another holder or a rebuild moved the checkpoint: re-read it.
 */
export async function deliverBatch(
  ctx: DeliverContext,
  from: string,
  to: string,
  events: readonly RecordedEvent[],
): Promise<boolean> {
  const whole = await attempt(ctx, from, to, events);
  if (whole.ok) return whole.moved;
  if (events.length === 1) return park(ctx, from, to, events[0]!, whole);
  const { subscriber: s } = ctx;
  if (s.mode === 'effects-first') await s.start?.(from, ctx.signal);
  let at = from;
  for (const [index, event] of events.entries()) {
    const next = index === events.length - 1 ? to : event.position;
    const one = await attempt(ctx, at, next, [event]);
    if (one.ok ? !one.moved : !(await park(ctx, at, next, event, one))) return false;
    at = next;
  }
  return true;
}
