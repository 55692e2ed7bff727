import { setTimeout as sleep } from 'node:timers/promises';

export interface BackoffOptions {
  /** First delay, in ms. Default 500. */
  initialMs?: number;
  /** Longest delay, in ms. Default 30 000. */
  maxMs?: number;
}

/** The delay before retry number `attempt` (0-based): doubling from initialMs up to maxMs, ±20% jitter. */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions = {},
  random: () => number = Math.random,
): number {
  const initial = options.initialMs ?? 500;
  const max = options.maxMs ?? 30_000;
  const base = Math.min(max, initial * 2 ** Math.min(attempt, 30));
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** Waits `ms`, or less when the signal aborts; never throws for the abort. */
export async function pause(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return;
  await sleep(ms, undefined, signal ? { signal } : {}).catch((error: unknown) => {
    if ((error as { name?: string }).name !== 'AbortError') throw error;
  });
}
