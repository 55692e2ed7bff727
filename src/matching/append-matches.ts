import type { AppendOptions, AppendRequest, EventStore } from '../eventstore/port.ts';
import { type AlertMatchedEventData, alertMatchedEvent, matchStream } from './streams.ts';

export interface PendingMatch {
  data: AlertMatchedEventData;
  context: Required<Pick<AppendOptions, 'correlationId' | 'causationId'>>;
}

/** Matches per appendMany call: large enough to spread a round trip and a commit thin. */
export const MATCHES_PER_APPEND = 500;

/**
 * Appends AlertMatched events in batches of `batchSize`, each batch one `appendMany` (one round
 * trip on PostgreSQL), `concurrency` batches at a time. Each match is its own stream and each
 * append is idempotent (event id = match id), so batches are independent and a repeated one is a
 * no-op. Counts how many were new and how many duplicates; `flush` rejects with the first failure after the batches in
 * flight have settled.
 */
export class MatchAppender {
  private pending: AppendRequest[] = [];
  private readonly seen = new Set<string>();
  private readonly queue: AppendRequest[][] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private failure: unknown;
  private failed = false;
  appended = 0;
  duplicates = 0;

  constructor(
    private readonly store: EventStore,
    private readonly concurrency = 16,
    private readonly batchSize = MATCHES_PER_APPEND,
  ) {}

  /**
   * Queues a match; its batch starts once it is full and a slot is free. A match id queued before
   * (the same episode twice in one feed batch) is a duplicate: its event id is already on its way.
   */
  add(match: PendingMatch): void {
    if (this.seen.has(match.data.matchId)) {
      this.duplicates++;
      return;
    }
    this.seen.add(match.data.matchId);
    this.pending.push({
      streamId: matchStream(match.data.matchId),
      events: [alertMatchedEvent(match.data)],
      options: { expectedRevision: 'any', ...match.context },
    });
    if (this.pending.length >= this.batchSize) this.seal();
  }

  /** Appends what is queued and waits for every batch. */
  async flush(): Promise<void> {
    this.seal();
    while (this.inFlight.size > 0) await Promise.race(this.inFlight);
    if (this.failed) {
      this.failed = false;
      const failure = this.failure;
      this.failure = undefined;
      this.queue.length = 0;
      throw failure;
    }
  }

  private seal(): void {
    if (this.pending.length > 0) this.queue.push(this.pending);
    this.pending = [];
    this.pump();
  }

  private pump(): void {
    while (!this.failed && this.inFlight.size < this.concurrency && this.queue.length > 0) {
      const batch = this.queue.shift()!;
      const task = this.store
        .appendMany(batch)
        .then(
          (results) => {
            for (const result of results) {
              if (result.duplicate) this.duplicates++;
              else this.appended++;
            }
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
