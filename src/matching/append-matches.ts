import type { AppendOptions, EventStore } from '../eventstore/port.ts';
import { type AlertMatchedEventData, alertMatchedEvent, matchStream } from './streams.ts';

export interface PendingMatch {
  data: AlertMatchedEventData;
  context: Required<Pick<AppendOptions, 'correlationId' | 'causationId'>>;
}

/**
 * Appends AlertMatched events, `concurrency` at a time: each match is its own stream, so the
 * appends are independent, and each is idempotent (event id = match id). Resolves with how many
 * were new; rejects with the first failure after the appends in flight have settled.
 */
export class MatchAppender {
  private readonly queue: PendingMatch[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private failure: unknown;
  private failed = false;
  appended = 0;
  duplicates = 0;

  constructor(
    private readonly store: EventStore,
    private readonly concurrency = 16,
  ) {}

  /** Queues a match; the append starts as soon as a slot is free. */
  add(match: PendingMatch): void {
    this.queue.push(match);
    this.pump();
  }

  /** Waits for every queued append. */
  async flush(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.race(this.inFlight);
    if (this.failed) {
      this.failed = false;
      const failure = this.failure;
      this.failure = undefined;
      this.queue.length = 0;
      throw failure;
    }
  }

  private pump(): void {
    while (!this.failed && this.inFlight.size < this.concurrency && this.queue.length > 0) {
      const { data, context } = this.queue.shift()!;
      const task = this.store
        .append(matchStream(data.matchId), [alertMatchedEvent(data)], { expectedRevision: 'any', ...context })
        .then(
          (result) => {
            if (result.duplicate) this.duplicates++;
            else this.appended++;
          },
          (error: unknown) => {
            if (!this.failed) {
              this.failed = true;
              this.failure = error;
            }
          },
        )
        .finally(() => {
          this.inFlight.delete(task);
          this.pump();
        });
      this.inFlight.add(task);
    }
  }
}
