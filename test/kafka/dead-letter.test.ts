import { describe, expect, it } from 'vitest';
import type { ErrorDetail } from '../../src/errors.ts';
import {
  DEAD_LETTER_HEADERS,
  deadLetterHeaders,
  deadLetterMessage,
  errorsHeader,
  readDeadLetter,
} from '../../src/kafka/dead-letter.ts';

const source = {
  topic: 'earshot.episodes',
  partition: 3,
  offset: '1042',
  key: Buffer.from('ep-1'),
  value: Buffer.from('{"type":"episode.transcribed"}'),
  timestamp: '1790000000000',
  headers: { traceparent: Buffer.from('00-abc-def-01') },
};
const errors: ErrorDetail[] = [{ location: '/episode', message: "must have required property 'episode'" }];
const at = new Date('2026-11-20T10:00:00Z');

/** Headers as a consumer reads them: every value a Buffer. */
const asConsumed = (headers: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, Buffer.from(String(value))]));

describe('dead letters', () => {
  it('carry the errors as JSON and where the message came from', () => {
    expect(deadLetterHeaders(errors, source, at)).toEqual({
      'earshot-errors': JSON.stringify(errors),
      'earshot-error-count': '1',
      'earshot-source-topic': 'earshot.episodes',
      'earshot-source-partition': '3',
      'earshot-source-offset': '1042',
      'earshot-source-timestamp': '1790000000000',
      'earshot-dead-lettered-at': '2026-11-20T10:00:00.000Z',
    });
  });

  it("keep the message's key, value and own headers unchanged, so it can be replayed as it was", () => {
    const letter = deadLetterMessage(source, errors, at);
    expect(letter.key).toBe(source.key);
    expect(letter.value).toBe(source.value);
    expect(letter.headers?.traceparent).toBe(source.headers.traceparent);
  });

  it('replace the earshot headers of an earlier failure with this one', () => {
    const replayed = {
      ...source,
      headers: {
        ...source.headers,
        [DEAD_LETTER_HEADERS.errors]: Buffer.from('[{"location":"/old","message":"old"}]'),
      },
    };
    const letter = deadLetterMessage(replayed, errors, at);
    expect(String(letter.headers?.[DEAD_LETTER_HEADERS.errors])).toBe(JSON.stringify(errors));
  });

  it('read back from consumed headers', () => {
    const letter = deadLetterMessage(source, errors, at);
    expect(readDeadLetter(asConsumed(letter.headers ?? {}))).toEqual({
      errors,
      errorCount: 1,
      source: { topic: 'earshot.episodes', partition: 3, offset: '1042', timestamp: '1790000000000' },
      deadLetteredAt: '2026-11-20T10:00:00.000Z',
    });
  });

  it('refuse to read a message that is not a dead letter', () => {
    expect(() => readDeadLetter({ traceparent: Buffer.from('x') })).toThrow(
      /header earshot-errors is missing/,
    );
  });
});

describe('errorsHeader', () => {
  it('keeps every error with its value when they fit', () => {
    const withValue: ErrorDetail[] = [{ location: '/type', message: 'is invalid', value: 'x' }];
    expect(JSON.parse(errorsHeader(withValue))).toEqual(withValue);
  });

  it('drops the values, then the last errors, to stay within its byte bound', () => {
    const many: ErrorDetail[] = Array.from({ length: 500 }, (_, i) => ({
      location: `/transcript/lines/${i}/text`,
      message: 'must be string',
      value: 'x'.repeat(200),
    }));
    const header = errorsHeader(many, 4096);
    expect(Buffer.byteLength(header)).toBeLessThanOrEqual(4096);
    const kept = JSON.parse(header) as ErrorDetail[];
    expect(kept.length).toBeGreaterThan(10);
    expect(kept[0]).toEqual({ location: '/transcript/lines/0/text', message: 'must be string' });
    expect(kept.map((error) => error.location)).toEqual(
      many.slice(0, kept.length).map((error) => error.location),
    );
    expect(deadLetterHeaders(many, source, at)['earshot-error-count']).toBe('500');
  });
});
