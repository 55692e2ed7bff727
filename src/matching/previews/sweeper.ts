import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { PreviewService } from './preview.ts';

/**
 * Finishes previews whose sweeping process stopped (their lease ran out) and deletes expired
 * ones. Any number of processes may run it: a preview is claimed with `for update skip locked`.
 */
export async function runPreviewSweeper(
  previews: PreviewService,
  options: { signal: AbortSignal; log: Logger; intervalMs?: number },
): Promise<void> {
  const { signal, log } = options;
  while (!signal.aborted) {
    try {
      await previews.deleteExpired();
      while (!signal.aborted && (await previews.takeOverOne()));
    } catch (error) {
      log.error({ err: error }, 'preview sweeper failed; retrying');
    }
    await sleep(options.intervalMs ?? 5000, undefined, { signal }).catch(() => {});
  }
}
