import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { retry } from '../retry.ts';
import type { Db } from './db.ts';

/** How often a standby tries to take a lock, in ms: the one default of every leader loop. */
const LOCK_RETRY_MS = 2000;

export interface LeaderOptions {
  signal: AbortSignal;
  /** How often a standby tries to take the lock, in ms. Default LOCK_RETRY_MS (2000). */
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
      await sleep(options.retryMs ?? LOCK_RETRY_MS, undefined, { signal }).catch(() => {});
      continue;
    }
    try {
      await work();
    } finally {
      await lock.release().catch((error: unknown) => options.onError?.(error));
    }
  }
}

/**
 * Runs `work` while holding the named lock (see whileLeader); when it fails, it starts again
 * after a backoff of 1 s doubling to 30 s, each failure logged.
 */
export async function whileLocked(
  db: Db,
  name: string,
  signal: AbortSignal,
  log: Logger,
  work: () => Promise<void>,
): Promise<void> {
  const onError = (error: unknown) => log.error({ err: error }, `could not take the ${name} lock`);
  await whileLeader(db, name, { signal, onError }, () =>
    retry(work, {
      signal,
      backoff: { initialMs: 1000, maxMs: 30_000 },
      onFailedAttempt: (error) => {
        if (!signal.aborted) log.error({ err: error }, `${name} stopped with an error; restarting`);
      },
    }).catch((error: unknown) => {
      if (!signal.aborted) throw error;
    }),
  );
}
