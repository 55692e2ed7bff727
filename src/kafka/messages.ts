import type { IHeaders, Message } from 'kafkajs';
import type { ErrorDetail } from '../errors.ts';
import type { IngestEvent } from '../ingestion/events.ts';
import { validateEvent } from '../ingestion/validate.ts';
import { eventTypeOfTopic, routeEvent, TOPICS, type Topics } from './topics.ts';

/** One consumed message and where it came from. */
export interface SourceMessage {
  topic: string;
  partition: number;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers?: IHeaders | undefined;
  timestamp?: string | undefined;
}

export type Decoded = { ok: true; event: IngestEvent } | { ok: false; errors: ErrorDetail[] };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A consumed message as a producer event, or every reason it is not one: not UTF-8 JSON, invalid
 * against its schema, on the wrong topic, or keyed by something other than its episode or entity id
 * (a wrong key would put versions of one episode on different partitions, out of order).
 */
export function decodeMessage(
  message: Pick<SourceMessage, 'topic' | 'key' | 'value'>,
  topics: Topics = TOPICS,
  now: Date = new Date(),
): Decoded {
  if (message.value === null || message.value.length === 0) {
    return { ok: false, errors: [{ location: '/', message: 'is empty: expected one JSON event' }] };
  }
  let text: string;
  try {
    text = utf8.decode(message.value);
  } catch {
    return { ok: false, errors: [{ location: '/', message: 'is not UTF-8 text' }] };
  }
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch (error) {
    return { ok: false, errors: [{ location: '/', message: `is not JSON: ${(error as Error).message}` }] };
  }
  const problems = validateEvent(event, '', now);
  if (problems.length) return { ok: false, errors: problems };

  const valid = event as IngestEvent;
  const expectedType = eventTypeOfTopic(message.topic, topics);
  if (expectedType !== valid.type) {
    const home = routeEvent(valid, topics).topic;
    return {
      ok: false,
      errors: [
        { location: '/type', message: `belongs on topic ${home}, not ${message.topic}`, value: valid.type },
      ],
    };
  }
  const { key } = routeEvent(valid, topics);
  const messageKey = message.key === null ? null : message.key.toString('utf8');
  if (messageKey !== key) {
    const location =
      valid.type === 'episode.transcribed'
        ? '/episode/id'
        : valid.type === 'ranking.captured'
          ? '/chart'
          : valid.type === 'podcast.upserted'
            ? '/podcast/id'
            : '/entity/id';
    const why =
      messageKey === null ? 'the message has no key' : `the message key is ${JSON.stringify(messageKey)}`;
    return {
      ok: false,
      errors: [{ location, message: `must equal the message key, but ${why}`, value: key }],
    };
  }
  return { ok: true, event: valid };
}

/**
 * The Kafka message of a producer event. `value` is the producer's own JSON text when there is one,
 * so the bytes on the topic are the bytes the producer wrote.
 */
export function encodeEvent(
  event: IngestEvent,
  topics: Topics = TOPICS,
  value: string = JSON.stringify(event),
): { topic: string; message: Message } {
  const { topic, key } = routeEvent(event, topics);
  return { topic, message: { key, value, headers: { 'content-type': 'application/json' } } };
}

/** A header's value as text: Kafka gives Buffers, possibly repeated; the last one wins. */
export function headerText(headers: IHeaders | undefined, name: string): string | undefined {
  const value = headers?.[name];
  const last = Array.isArray(value) ? value.at(-1) : value;
  return last === undefined ? undefined : Buffer.isBuffer(last) ? last.toString('utf8') : last;
}
