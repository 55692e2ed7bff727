import type { Db, Queryable } from './db.ts';

/**
 * Wakes sleeping followers of one LISTEN/NOTIFY channel: event-store subscribers (new appends) and
 * delivery workers (new queue rows). A wake-up comes from this process (`wake`, `announce`) or
 * from any process through NOTIFY. The generation counter closes the gap between a reader's last
 * look and its wait, so no wake-up is missed. `announce` keeps at most one NOTIFY in flight and
 * coalesces the rest.
 */
export class Wakeup {
  generation = 0;
  private readonly waiters = new Set<() => void>();
  private listening: Promise<(() => Promise<void>) | null> | undefined;
  private sending: Promise<void> | undefined;
  private sendAgain = false;

  constructor(
    private readonly db: Db,
    private readonly channel: string,
  ) {}

  /** Starts listening once; when LISTEN is unavailable, waits fall back to their timeout (polling). */
  async start(): Promise<void> {
    this.listening ??= this.db.listen(this.channel, () => this.wake()).catch(() => null);
    await this.listening;
  }

  /** Wakes this process's waiters. */
  wake(): void {
    this.generation++;
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Wakes this process's waiters now and the other processes' through one NOTIFY. */
  announce(): void {
    this.wake();
    if (this.sending) {
      this.sendAgain = true;
      return;
    }
    this.sending = notify(this.db, this.channel).finally(() => {
      this.sending = undefined;
      if (this.sendAgain) {
        this.sendAgain = false;
        this.announce();
      }
    });
  }

  /** Resolves on the next wake-up after generation `seen`, after `ms`, or on abort. */
  wait(seen: number, ms: number, signals: AbortSignal | readonly AbortSignal[]): Promise<void> {
    const all = Array.isArray(signals) ? (signals as readonly AbortSignal[]) : [signals as AbortSignal];
    if (this.generation !== seen || all.some((signal) => signal.aborted)) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.waiters.delete(finish);
        for (const signal of all) signal.removeEventListener('abort', finish);
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.waiters.add(finish);
      for (const signal of all) signal.addEventListener('abort', finish, { once: true });
    });
  }

  async stop(): Promise<void> {
    this.sendAgain = false;
    while (this.sending) await this.sending;
    const listening = this.listening;
    this.listening = undefined;
    for (const waiter of [...this.waiters]) waiter();
    const unlisten = await listening;
    await unlisten?.().catch(() => undefined);
  }
}

/**
 * Tells every process's followers of `channel` that there is news. Inside a transaction the
 * notification is delivered at commit. Best effort: followers also poll.
 */
export async function notify(q: Queryable, channel: string): Promise<void> {
  await q.query('select pg_notify($1::text, $2::text)', [channel, '']).then(
    () => undefined,
    () => undefined,
  );
}
