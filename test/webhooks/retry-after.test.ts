import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../src/webhooks/retry-after.ts';

const now = new Date('1994-11-06T08:48:37Z');

describe('parsing Retry-After', () => {
  it.each([
    ['0', 0],
    ['30', 30_000],
    [' 7 ', 7_000],
    ['Sun, 06 Nov 1994 08:49:37 GMT', 60_000],
    ['Sunday, 06-Nov-94 08:49:37 GMT', 60_000],
    ['Sun Nov  6 08:49:37 1994', 60_000],
    ['Sun, 06 Nov 1994 08:00:00 GMT', 0],
  ])('reads %j as %i ms', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });

  it.each([undefined, '', '-5', '1.5', 'soon', '2024-01-01', 'Sun, 06 Nov 1994 08:49:37 PST'])(
    'ignores %j',
    (value) => {
      expect(parseRetryAfter(value, now)).toBeUndefined();
    },
  );
});
