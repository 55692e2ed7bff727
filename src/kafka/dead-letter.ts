import type { IHeaders, Message } from 'kafkajs';
import type { ErrorDetail } from '../errors.ts';
import { headerText, type SourceMessage } from './messages.ts';

/** The headers earshot adds to a dead letter (docs/kafka.md). */
export const DEAD_LETTER_HEADERS = {
  errors: 'earshot-errors',
  errorCount: 'earshot-error-count',
  sourceTopic: 'earshot-source-topic',
  sourcePartition: 'earshot-source-partition',
  sourceOffset: 'earshot-source-offset',
  sourceTimestamp: 'earshot-source-timestamp',
  deadLetteredAt: 'earshot-dead-lettered-at',
} as const;

/** Bound on the errors header, far below Kafka's 1 MB default message limit, so a dead letter always fits beside its value. */
export const MAX_ERRORS_HEADER_BYTES = 16 * 1024;

/**
 * The errors as a JSON array no longer than `maxBytes`: whole when it fits, else without the
 * offending values, else the first errors that fit (`earshot-error-count` still says how many).
 */
export function errorsHeader(errors: readonly ErrorDetail[], maxBytes = MAX_ERRORS_HEADER_BYTES): string {
  const whole = JSON.stringify(errors);
  if (Buffer.byteLength(whole) <= maxBytes) return whole;
  const bare = errors.map(({ location, message }) => ({ location, message }));
  const kept: ErrorDetail[] = [];
  let size = 2;
  for (const error of bare) {
    const bytes = Buffer.byteLength(JSON.stringify(error)) + 1;
    if (size + bytes > maxBytes) break;
    kept.push(error);
    size += bytes;
  }
  return JSON.stringify(kept);
}

export function deadLetterHeaders(
  errors: readonly ErrorDetail[],
  source: Pick<SourceMessage, 'topic' | 'partition' | 'offset' | 'timestamp'>,
  at: Date,
): Record<string, string> {
  const headers: Record<string, string> = {
    [DEAD_LETTER_HEADERS.errors]: errorsHeader(errors),
    [DEAD_LETTER_HEADERS.errorCount]: String(errors.length),
    [DEAD_LETTER_HEADERS.sourceTopic]: source.topic,
    [DEAD_LETTER_HEADERS.sourcePartition]: String(source.partition),
    [DEAD_LETTER_HEADERS.sourceOffset]: source.offset,
    [DEAD_LETTER_HEADERS.deadLetteredAt]: at.toISOString(),
  };
  if (source.timestamp !== undefined) headers[DEAD_LETTER_HEADERS.sourceTimestamp] = source.timestamp;
  return headers;
}

/**
 * The dead letter of a message: its key and value byte for byte (so it can be replayed as it was),
 * its own headers, and earshot's headers saying why and where from. Earshot's replace older ones,
 * so a replayed message that fails again says why it failed this time.
 */
export function deadLetterMessage(source: SourceMessage, errors: readonly ErrorDetail[], at: Date): Message {
  const headers: IHeaders = {};
  for (const [name, value] of Object.entries(source.headers ?? {})) {
    if (value !== undefined && !name.startsWith('earshot-')) headers[name] = value;
  }
  Object.assign(headers, deadLetterHeaders(errors, source, at));
  return { key: source.key, value: source.value, headers };
}

export interface DeadLetter {
  errors: ErrorDetail[];
  errorCount: number;
  source: { topic: string; partition: number; offset: string; timestamp?: string };
  deadLetteredAt: string;
}

/** Reads earshot's headers back from a consumed dead letter (for tools and replays). */
export function readDeadLetter(headers: IHeaders | undefined): DeadLetter {
  const text = (name: string) => {
    const value = headerText(headers, name);
    if (value === undefined) throw new Error(`not an earshot dead letter: header ${name} is missing`);
    return value;
  };
  const timestamp = headerText(headers, DEAD_LETTER_HEADERS.sourceTimestamp);
  return {
    errors: JSON.parse(text(DEAD_LETTER_HEADERS.errors)) as ErrorDetail[],
    errorCount: Number(text(DEAD_LETTER_HEADERS.errorCount)),
    source: {
      topic: text(DEAD_LETTER_HEADERS.sourceTopic),
      partition: Number(text(DEAD_LETTER_HEADERS.sourcePartition)),
      offset: text(DEAD_LETTER_HEADERS.sourceOffset),
      ...(timestamp === undefined ? {} : { timestamp }),
    },
    deadLetteredAt: text(DEAD_LETTER_HEADERS.deadLetteredAt),
  };
}
