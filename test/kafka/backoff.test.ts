import { describe, expect, it } from 'vitest';
import { backoffDelay, pause } from '../../src/kafka/backoff.ts';

describe('backoffDelay', () => {
  it('doubles from the initial delay and stops at the maximum', () => {
    const middle = () => 0.5;
    const delays = [0, 1, 2, 3, 4, 10].map((attempt) =>
      backoffDelay(attempt, { initialMs: 100, maxMs: 1000 }, middle),
    );
    expect(delays).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it('jitters by at most 20% either way', () => {
    expect(backoffDelay(0, { initialMs: 1000 }, () => 0)).toBe(800);
    expect(backoffDelay(0, { initialMs: 1000 }, () => 1)).toBe(1200);
  });

  it('stays finite for very large attempt numbers', () => {
    expect(backoffDelay(10_000, { initialMs: 500, maxMs: 30_000 }, () => 0.5)).toBe(30_000);
  });
});

describe('pause', () => {
  it('returns early, without throwing, when the signal aborts', async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 20);
    await pause(10_000, controller.signal);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
