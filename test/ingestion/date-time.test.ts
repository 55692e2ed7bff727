import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { utcInstant } from '../../src/date-time.ts';

const FIRST = Date.parse('0001-01-01T00:00:00Z');
const LAST = Date.parse('9999-12-31T23:59:59.999Z');
const pad = (n: number, width = 2) => String(Math.abs(n)).padStart(width, '0');

/** The instant written in local time at `offsetMinutes` from UTC, RFC 3339 style. */
function write(instant: number, offsetMinutes: number): string | undefined {
  const local = new Date(instant + offsetMinutes * 60_000);
  if (local.getUTCFullYear() < 0 || local.getUTCFullYear() > 9999) return undefined;
  const offset =
    offsetMinutes === 0
      ? 'Z'
      : `${offsetMinutes < 0 ? '-' : '+'}${pad(Math.trunc(offsetMinutes / 60))}:${pad(offsetMinutes % 60)}`;
  return `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}T${pad(
    local.getUTCHours(),
  )}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}.${pad(local.getUTCMilliseconds(), 3)}${offset}`;
}

describe('caller date-times', () => {
  it('reads any offset form of an instant in years 1–9999 as that instant, and refuses it outside', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: FIRST - 86_400_000, max: LAST + 86_400_000 }),
        fc.integer({ min: -959, max: 959 }),
        (instant, offsetMinutes) => {
          const text = write(instant, offsetMinutes);
          fc.pre(text !== undefined);
          const inRange = instant >= FIRST && instant <= LAST;
          expect(utcInstant(text!)).toBe(inRange ? instant : undefined);
        },
      ),
      { seed: 10, numRuns: 2000 },
    );
  });

  it('refuses the year-0 and year-10000 instants written with an offset', () => {
    expect(utcInstant('0001-01-01T00:00:00+01:00')).toBeUndefined();
    expect(utcInstant('9999-12-31T23:59:59-15:59')).toBeUndefined();
    expect(utcInstant('9999-12-31T23:59:60Z')).toBeUndefined();
    expect(utcInstant('0001-01-01T00:00:00-01:00')).toBe(FIRST + 3_600_000);
  });
});
