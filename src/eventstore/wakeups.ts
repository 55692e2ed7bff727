import type { Db } from '../db/db.ts';

/**
 * Wakes caught-up subscribers when any process appends. One LISTEN per store; the generation
 * counter closes the gap between a reader's last read and its wait, so no notification is missed.
 * Appends announce themselves after commit: at most one NOTIFY in flight, the rest coalesced.
 */
export class AppendWakeups {
  generation = 0;
  private readonly waiters = new Set<() => void>();
  private listening: Promise<(() => Promise<void>) | null> | undefined;
  private sending: Promise<void> | undefined;
  private sendAgain = false;

  constructor(
    private readonly db: Db,
    private readonly channel: string,
  ) {}

  /** Wakes this process's subscribers now and the other processes' through one NOTIFY. */
  announce(): void {
    this.wake();
    if (this.sending) {
      this.sendAgain = true;
      return;
    }
    this.sending = this.db
      .query('select pg_notify($1, $2)', [this.channel, ''])
      .then(
        () => {},
        () => {},
      )
      .finally(() => {
        this.sending = undefined;
        if (this.sendAgain) {
          this.sendAgain = false;
          this.announce();
        }
      });
  }

  private wake(): void {
    this.generation++;
    for (const wake of this.waiters) wake();
  }

  /** Starts listening once; when LISTEN is unavailable, subscribers fall back to polling. */
  async start(): Promise<void> {
    this.listening ??= this.db.listen(this.channel, () => this.wake()).catch(() => null);
    await this.listening;
  }

  /** Resolves on the next notification after generation `seen`, after `ms`, or on abort. */
  wait(seen: number, ms: number, signals: readonly AbortSignal[]): Promise<void> {
    if (this.generation !== seen || signals.some((signal) => signal.aborted)) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.waiters.delete(finish);
        for (const signal of signals) signal.removeEventListener('abort', finish);
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.waiters.add(finish);
      for (const signal of signals) signal.addEventListener('abort', finish, { once: true });
    });
  }

  async stop(): Promise<void> {
    this.sendAgain = false;
    while (this.sending) await this.sending;
    const listening = this.listening;
    this.listening = undefined;
    for (const wake of [...this.waiters]) wake();
    const unlisten = await listening;
    await unlisten?.();
  }
}
