import { describe, expect, it } from 'vitest';
import { retry } from '../src/retry.ts';

const backoff = { initialMs: 1, maxMs: 5 };

describe('retry', () => {
  it('retries a failing attempt until it succeeds, telling each failure with its number', async () => {
    const failures: number[] = [];
    const result = await retry(
      async (attempt) => {
        if (attempt < 3) throw new Error(`failure ${attempt}`);
        return attempt;
      },
      { backoff, onFailedAttempt: (_error, attempt) => failures.push(attempt) },
    );
    expect(result).toBe(3);
    expect(failures).toEqual([1, 2]);
  });

  it('gives up with the last error once the retries are spent, a TypeError included', async () => {
    let attempts = 0;
    const failing = retry(
      async () => {
        attempts++;
        throw new TypeError(`broken ${attempts}`);
      },
      { backoff, retries: 2 },
    );
    await expect(failing).rejects.toThrow('broken 3');
    expect(attempts).toBe(3);
  });

  it('stops at once when shouldRetry refuses, and on abort with the signal reason', async () => {
    let attempts = 0;
    await expect(
      retry(
        async () => {
          attempts++;
          throw new Error('permanent');
        },
        { backoff, shouldRetry: () => false },
      ),
    ).rejects.toThrow('permanent');
    expect(attempts).toBe(1);

    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(new Error('stopped')), 20);
    await expect(
      retry(
        async () => {
          throw new Error('down');
        },
        { backoff: { initialMs: 10_000 }, signal: controller.signal },
      ),
    ).rejects.toThrow('stopped');
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
