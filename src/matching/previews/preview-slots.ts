/** How many preview sweeps run at once, and how many may wait (docs/matching.md, Previews). */
export interface PreviewLimits {
  /** Sweeps running at once in this process. */
  perProcess: number;
  /** Sweeps of one project running at once in this process. */
  perProject: number;
  /** Sweeps waiting for a slot in this process; one project may hold at most `perProject` of them. */
  queue: number;
}

export const DEFAULT_PREVIEW_LIMITS: PreviewLimits = { perProcess: 4, perProject: 2, queue: 8 };

interface Waiter {
  project: string | undefined;
  start(): void;
}

/**
 * Slots for preview sweeps. `tryEnter` admits a sweep when it can run now or wait in the short
 * queue, and refuses it otherwise (the caller answers 429); `enter` always waits (a takeover of an
 * abandoned preview must not be refused). The returned promise resolves once the sweep may run; the
 * sweep then calls `leave`.
 */
export class PreviewSlots {
  private running = 0;
  private readonly runningBy = new Map<string, number>();
  private readonly waiting: Waiter[] = [];

  constructor(private readonly limits: PreviewLimits = DEFAULT_PREVIEW_LIMITS) {}

  tryEnter(project: string): Promise<() => void> | undefined {
    if (this.canRun(project)) return Promise.resolve(this.take(project));
    const queuedTotal = this.waiting.length;
    const queuedOwn = this.waiting.filter((w) => w.project === project).length;
    if (queuedTotal >= this.limits.queue || queuedOwn >= this.limits.perProject) return undefined;
    return this.wait(project);
  }

  enter(project?: string): Promise<() => void> {
    return this.canRun(project) ? Promise.resolve(this.take(project)) : this.wait(project);
  }

  private canRun(project: string | undefined) {
    return (
      this.running < this.limits.perProcess &&
      (project === undefined || (this.runningBy.get(project) ?? 0) < this.limits.perProject)
    );
  }

  private wait(project: string | undefined): Promise<() => void> {
    return new Promise((resolve) => {
      this.waiting.push({ project, start: () => resolve(this.take(project)) });
    });
  }

  private take(project: string | undefined): () => void {
    this.running++;
    if (project !== undefined) this.runningBy.set(project, (this.runningBy.get(project) ?? 0) + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.running--;
      if (project !== undefined) {
        const n = (this.runningBy.get(project) ?? 1) - 1;
        if (n === 0) this.runningBy.delete(project);
        else this.runningBy.set(project, n);
      }
      this.next();
    };
  }

  private next() {
    const index = this.waiting.findIndex((w) => this.canRun(w.project));
    if (index < 0) return;
    const [waiter] = this.waiting.splice(index, 1);
    waiter!.start();
  }
}
