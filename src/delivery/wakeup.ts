import type { Db } from '../db/db.ts';

/**
 * Wakes a sleeping worker: locally (work finished here) or from any process through
 * LISTEN/NOTIFY on one channel. The generation counter closes the gap between a look at the
 * queue and the wait that follows it.
 */
export class Wakeup {
  generation = 0;
  private readonly waiters = new Set<() => void>();
  private unlisten: (() => Promise<void>) | undefined;

  constructor(
    private readonly db: Db,
    private readonly channel: string,
  ) {}

  async start(): Promise<void> {
    this.unlisten = await this.db.listen(this.channel, () => this.wake()).catch(() => undefined);
  }

  wake(): void {
    this.generation++;
    for (const waiter of [...this.waiters]) waiter();
  }

  wait(seen: number, ms: number, signal: AbortSignal): Promise<void> {
    if (this.generation !== seen || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.waiters.delete(finish);
        signal.removeEventListener('abort', finish);
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.waiters.add(finish);
      signal.addEventListener('abort', finish, { once: true });
    });
  }

  async stop(): Promise<void> {
    for (const waiter of [...this.waiters]) waiter();
    await this.unlisten?.().catch(() => undefined);
  }
}

/** Tells every process's workers that there is new work on `channel`. */
export async function announce(db: Db, channel: string): Promise<void> {
  await db.query('select pg_notify($1::text, $2::text)', [channel, '']).catch(() => undefined);
}
