import { setTimeout as sleep } from 'node:timers/promises';
import { whileLeader } from '../db/leader.ts';
import type { Role, Runtime, Worker } from '../runtime.ts';
import { refreshLeaderboardSnapshots } from './leaderboard.ts';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** EARSHOT_SNAPSHOT_INTERVAL as milliseconds: a number with ms, s, m, h or d (default 10m). */
export function parseSnapshotInterval(text: string | undefined): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec((text ?? '10m').trim());
  const ms = match ? Math.round(Number(match[1]) * UNITS[match[2]!]!) : Number.NaN;
  if (!(ms >= 1))
    throw new Error(`EARSHOT_SNAPSHOT_INTERVAL: "${text}" is not a duration; use e.g. 10m, 30s, 1s`);
  return ms;
}

/**
 * Refreshes the leaderboard's snapshot windows every interval; one process at a time (a leader
 * lock), on the runtime's clock.
 */
export function snapshotWorker(runtime: Runtime, role: Role, intervalMs: number): Worker {
  return {
    name: 'advertising-snapshots',
    role,
    async run(signal) {
      const onError = (error: unknown) =>
        runtime.log.error({ err: error }, 'leaderboard snapshot refresh failed');
      await whileLeader(runtime.db, 'earshot:advertising-snapshots', { signal, onError }, async () => {
        while (!signal.aborted) {
          const started = performance.now();
          try {
            await refreshLeaderboardSnapshots(runtime.db, runtime.now());
            runtime.log.debug(
              { ms: Math.round(performance.now() - started) },
              'leaderboard snapshots refreshed',
            );
          } catch (error) {
            onError(error);
          }
          await sleep(intervalMs, undefined, { signal }).catch(() => {});
        }
      });
    },
  };
}
