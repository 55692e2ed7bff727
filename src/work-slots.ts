/**
 * How much costly work runs at once in this process: alert preview sweeps
 * (docs/matching-pipeline.md#previews) and search requests (docs/search.md, "Searches in flight").
 */
export interface SlotLimits {
  /** Work running at once in this process. */
  perProcess: number;
  /** Work of one key (a project, an x402 payer) running at once in this process. */
  perKey: number;
  /** Work waiting for a slot in this process; one key may hold at most `perKey` of them. 0: none waits. */
  queue: number;
}

interface Waiter {
  key: string | undefined;
  start(): void;
}

/**
 * Slots for costly work. `tryEnter` admits work when it can run now or wait in the short queue,
 * and refuses it otherwise (the caller answers 429); `enter` always waits (a takeover of an
 * abandoned preview must not be refused). The returned promise resolves once the work may run; the
 * work then calls `leave` (once; later calls do nothing).
 */
export class WorkSlots {
  private running = 0;
  private readonly runningBy = new Map<string, number>();
  private readonly waiting: Waiter[] = [];

  constructor(private readonly limits: SlotLimits) {}

  tryEnter(key: string): Promise<() => void> | undefined {
    if (this.canRun(key)) return Promise.resolve(this.take(key));
    const queuedTotal = this.waiting.length;
    const queuedOwn = this.waiting.filter((w) => w.key === key).length;
    if (queuedTotal >= this.limits.queue || queuedOwn >= this.limits.perKey) return undefined;
    return this.wait(key);
  }

  enter(key?: string): Promise<() => void> {
    return this.canRun(key) ? Promise.resolve(this.take(key)) : this.wait(key);
  }

  private canRun(key: string | undefined) {
    return (
      this.running < this.limits.perProcess &&
      (key === undefined || (this.runningBy.get(key) ?? 0) < this.limits.perKey)
    );
  }

  private wait(key: string | undefined): Promise<() => void> {
    return new Promise((resolve) => {
      this.waiting.push({ key, start: () => resolve(this.take(key)) });
    });
  }

  private take(key: string | undefined): () => void {
    this.running++;
    if (key !== undefined) this.runningBy.set(key, (this.runningBy.get(key) ?? 0) + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.running--;
      if (key !== undefined) {
        const n = (this.runningBy.get(key) ?? 1) - 1;
        if (n === 0) this.runningBy.delete(key);
        else this.runningBy.set(key, n);
      }
      this.next();
    };
  }

  private next() {
    const index = this.waiting.findIndex((w) => this.canRun(w.key));
    if (index < 0) return;
    const [waiter] = this.waiting.splice(index, 1);
    waiter!.start();
  }
}
