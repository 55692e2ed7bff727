import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_SCHEDULE } from '../../../src/config.ts';
import {
  crashDelay,
  crashLimit,
  maxAttempts,
  parseRetrySchedule,
  retryDelay,
} from '../../../src/delivery/queue/schedule.ts';

describe('retry schedule', () => {
  const schedule = parseRetrySchedule(DEFAULT_RETRY_SCHEDULE);

  it('reads the default schedule as 7 delays, so 8 attempts', () => {
    expect(schedule.delaysMs).toEqual([
      5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
    ]);
    expect(maxAttempts(schedule)).toBe(8);
  });

  it('jitters each delay by ±20%', () => {
    expect(retryDelay(schedule, 1, { random: () => 0 })).toBe(4_000);
    expect(retryDelay(schedule, 1, { random: () => 0.5 })).toBe(5_000);
    expect(retryDelay(schedule, 1, { random: () => 0.999999 })).toBe(6_000);
    expect(retryDelay(schedule, 2, { random: () => 0 })).toBe(240_000);
  });

  it('lets Retry-After delay an attempt up to the longest delay of the schedule', () => {
    expect(retryDelay(schedule, 1, { retryAfterMs: 120_000, random: () => 0.5 })).toBe(120_000);
    expect(retryDelay(schedule, 2, { retryAfterMs: 7 * 86_400_000, random: () => 0.5 })).toBe(36_000_000);
  });

  it('never lets Retry-After shorten the scheduled, jittered delay', () => {
    expect(retryDelay(schedule, 3, { retryAfterMs: 0, random: () => 0.5 })).toBe(1_800_000);
    expect(retryDelay(schedule, 2, { retryAfterMs: 1_000, random: () => 0 })).toBe(240_000);
    expect(retryDelay(schedule, 1, { retryAfterMs: 1_000, random: () => 0 })).toBe(4_000);
    expect(retryDelay(schedule, 1, { retryAfterMs: 1_000, random: () => 0.999999 })).toBe(6_000);
    expect(retryDelay(schedule, 7, { retryAfterMs: 0, random: () => 0.75 })).toBe(39_600_000);
  });

  it('has no delay after the last attempt, whatever Retry-After says', () => {
    expect(retryDelay(schedule, 8)).toBeUndefined();
    expect(retryDelay(schedule, 8, { retryAfterMs: 1_000 })).toBeUndefined();
  });

  it('accepts ms and d, and rejects what is not a delay with the entry named', () => {
    expect(parseRetrySchedule('250ms, 1d').delaysMs).toEqual([250, 86_400_000]);
    expect(() => parseRetrySchedule('5s,soon')).toThrow(/"soon" is not a delay/);
  });

  it('backs crashed attempts off from 30 s, doubling, capped at the longest delay, with the jitter', () => {
    const delays = Array.from({ length: 13 }, (_, i) => crashDelay(schedule, i + 1, () => 0.5));
    expect(delays.slice(0, 4)).toEqual([30_000, 60_000, 120_000, 240_000]);
    expect(delays.slice(10)).toEqual([30_720_000, 36_000_000, 36_000_000]);
    expect(crashDelay(schedule, 1, () => 0)).toBe(24_000);
    expect(crashDelay(parseRetrySchedule('1s'), 5, () => 0.5)).toBe(30_000);
  });

  it('spends the budget after as many crashes as attempts, and no sooner than the schedule lasts', () => {
    // 27.6 h of schedule: 30 s + 1 m + … + 8.5 h + 10 h = 27.1 h is short, one more delay (37.1 h) is not.
    expect(crashLimit(schedule)).toBe(14);
    const waited = (limit: number, of = schedule) =>
      Array.from({ length: limit - 1 }, (_, i) => crashDelay(of, i + 1, () => 0.5)).reduce(
        (a, b) => a + b,
        0,
      );
    const span = schedule.delaysMs.reduce((a, b) => a + b, 0);
    expect(waited(14)).toBeGreaterThanOrEqual(span);
    expect(waited(13)).toBeLessThan(span);
    expect(crashLimit(parseRetrySchedule('5s,1m,1h'))).toBe(8);
    // Short delays: the attempts count (17), not the time.
    expect(crashLimit(parseRetrySchedule(Array.from({ length: 16 }, () => '1s').join(',')))).toBe(17);
    // No retries at all: the first crash spends it, as the first failure would.
    expect(crashLimit(parseRetrySchedule(''))).toBe(1);
  });
});
