import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from './db.ts';

export interface LeaderOptions {
  signal: AbortSignal;
  /** How often a standby tries to take the lock, in ms. Default 5000. */
  retryMs?: number;
  /** Told when the lock cannot be asked for (database down); the loop keeps trying. */
  onError?(error: unknown): void;
}

/**
 * One process at a time does `work`: whoever holds the named lock runs it (again, should it
 * return while the signal is live); the others wait as standbys and take over when the holder's
 * connection or process goes away. `work` releases nothing itself.
 */
export async function whileLeader(db: Db, name: string, options: LeaderOptions, work: () => Promise<void>) {
  const { signal } = options;
  while (!signal.aborted) {
    const lock = await db.tryLock(name).catch((error: unknown) => {
      options.onError?.(error);
      return null;
    });
    if (!lock) {
      await sleep(options.retryMs ?? 5000, undefined, { signal }).catch(() => {});
      continue;
    }
    try {
      await work();
    } finally {
      await lock.release().catch((error: unknown) => options.onError?.(error));
    }
  }
}
