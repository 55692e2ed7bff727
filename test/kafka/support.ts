import type { Message } from 'kafkajs';
import pino from 'pino';
import type { EventStore, RecordedEvent } from '../../src/eventstore/port.ts';
import type { IngestEvent } from '../../src/ingestion/events.ts';
import { encodeEvent, type SourceMessage } from '../../src/kafka/messages.ts';
import { TOPICS, type Topics } from '../../src/kafka/topics.ts';

export const silentLog = pino({ level: 'silent' });

/** Consumed messages at consecutive offsets of one partition. */
export function consumed(
  items: ReadonlyArray<IngestEvent | { topic: string; key: string | null; value: string }>,
  options: { topics?: Topics; partition?: number; firstOffset?: number } = {},
): SourceMessage[] {
  return items.map((item, i) => {
    const raw =
      'type' in item ? encodeEvent(item, options.topics ?? TOPICS) : { topic: item.topic, message: item };
    const message = raw.message as Message;
    return {
      topic: raw.topic,
      partition: options.partition ?? 0,
      offset: String((options.firstOffset ?? 0) + i),
      key: message.key === null || message.key === undefined ? null : Buffer.from(message.key),
      value: message.value === null ? null : Buffer.from(message.value),
      headers: {},
      timestamp: '1790000000000',
    };
  });
}

/** Every ingested event in the store, in "all" order. */
export async function storedIngestEvents(store: EventStore): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await store.readAll({
      ...(after ? { after } : {}),
      eventTypes: ['EpisodeTranscribed', 'EntityUpserted'],
      limit: 1000,
    });
    events.push(...page.events);
    if (page.events.length < 1000) return events;
    after = page.lastPosition;
  }
}

/** A real store whose first `failures` appends fail as a dropped connection would. */
export function failingFirst(store: EventStore, failures: number): EventStore & { attempts: number } {
  let left = failures;
  const wrapped = {
    ...store,
    attempts: 0,
    async append(...args: Parameters<EventStore['append']>) {
      wrapped.attempts++;
      if (left > 0) {
        left--;
        throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
      }
      return store.append(...args);
    },
  };
  return wrapped;
}
