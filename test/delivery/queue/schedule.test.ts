import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_SCHEDULE } from '../../../src/config.ts';
import { maxAttempts, parseRetrySchedule, retryDelay } from '../../../src/delivery/queue/schedule.ts';

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
});
