import type { Message } from 'kafkajs';
import { BadRequestError, type ErrorDetail, ValidationError } from '../errors.ts';
import type { EventStore } from '../eventstore/port.ts';
import { type IngestEvent, streamOf } from '../ingestion/events.ts';
import { ingestEvents } from '../ingestion/ingest.ts';
import { deadLetterMessage } from './dead-letter.ts';
import { decodeMessage, type SourceMessage } from './messages.ts';
import type { Topics } from './topics.ts';

export interface IngestMessagesDeps {
  store: EventStore;
  topics: Topics;
  /** Writes dead letters durably (acks from all in-sync replicas); throws when it could not. */
  sendDeadLetters(messages: Message[]): Promise<void>;
  now(): Date;
  /** Streams appended at the same time. Default 8. */
  appendConcurrency?: number;
}

export interface IngestMessagesResult {
  appended: number;
  duplicates: number;
  deadLettered: number;
}

/**
 * An error the event store will give again for the same event however often it is retried: the
 * event can never be stored (PostgreSQL data exceptions such as a \u0000 in JSON, SQLSTATE class 22;
 * program limits, class 54; the store's own validation). Anything else is taken as transient.
 */
export function isPermanentStoreError(error: unknown): boolean {
  if (error instanceof ValidationError || error instanceof BadRequestError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(22|54)[0-9A-Z]{3}$/.test(code);
}

interface Pending {
  index: number;
  source: SourceMessage;
  event: IngestEvent;
}

/**
 * Messages grouped by the stream their event goes to, each group in offset order. Different
 * streams can be appended at the same time; one stream's events must go in order.
 */
export function groupByStream<T extends { event: IngestEvent }>(items: readonly T[]): T[][] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const stream = streamOf(item.event);
    const group = groups.get(stream);
    if (group) group.push(item);
    else groups.set(stream, [item]);
  }
  return [...groups.values()];
}

/**
 * Stores a run of consumed messages: valid events are appended to the event store (a redelivered
 * event id is a no-op there), everything else goes to the dead-letter topic. Resolves only when all
 * of it is durable, so the caller may then commit the messages' offsets; throws when any of it is
 * not (a retry re-appends what was stored: no-ops).
 */
export async function ingestMessages(
  messages: readonly SourceMessage[],
  deps: IngestMessagesDeps,
): Promise<IngestMessagesResult> {
  const result: IngestMessagesResult = { appended: 0, duplicates: 0, deadLettered: 0 };
  const rejected: Array<{ index: number; errors: ErrorDetail[] }> = [];
  const valid: Pending[] = [];
  messages.forEach((source, index) => {
    const decoded = decodeMessage(source, deps.topics, deps.now());
    if (decoded.ok) valid.push({ index, source, event: decoded.event });
    else rejected.push({ index, errors: decoded.errors });
  });

  await inParallel(groupByStream(valid), deps.appendConcurrency ?? 8, async (group) => {
    for (const { index, event } of group) {
      try {
        const stored = await ingestEvents(deps.store, [event]);
        result.appended += stored.accepted;
        result.duplicates += stored.duplicates;
      } catch (error) {
        if (!isPermanentStoreError(error)) throw error;
        rejected.push({
          index,
          errors: [{ location: '/', message: `was refused by the event store: ${(error as Error).message}` }],
        });
      }
    }
  });

  if (rejected.length) {
    const at = deps.now();
    rejected.sort((a, b) => a.index - b.index);
    await deps.sendDeadLetters(
      rejected.map(({ index, errors }) => deadLetterMessage(messages[index]!, errors, at)),
    );
  }
  result.deadLettered = rejected.length;
  return result;
}

/**
 * Runs `work` on every item, at most `limit` at a time. After the first failure no new item starts;
 * it waits for the ones in flight before rethrowing, so nothing is still writing when the caller retries.
 */
export async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>) {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (!failure && next < items.length) {
      const item = items[next++]!;
      try {
        await work(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failure) throw failure.error;
}
