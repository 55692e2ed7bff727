import { BadRequestError } from '../errors.ts';

/**
 * The event-store port. Adapters: PostgreSQL/PGlite (postgres.ts) and EventStoreDB (eventstoredb.ts).
 *
 * Positions in "all" are opaque strings that only the adapter that made them compares. Both
 * adapters encode a pair of non-negative integers as "<major>/<minor>" ordered by major then minor:
 * PostgreSQL (transaction_id xid8, global_position), EventStoreDB (commit, prepare).
 */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | number;

export interface EventMetadata {
  correlationId?: string;
  causationId?: string;
  [key: string]: unknown;
}

export interface NewEvent<Type extends string = string, Data = unknown> {
  /** Idempotency key: appending an event whose id is already stored is a no-op. Default: a random UUID. */
  id?: string;
  type: Type;
  data: Data;
  metadata?: EventMetadata;
}

export interface RecordedEvent<Type extends string = string, Data = unknown> {
  id: string;
  streamId: string;
  /** 0-based position of the event within its stream. */
  revision: number;
  /** Position in "all" (see above). */
  position: string;
  type: Type;
  data: Data;
  metadata: EventMetadata;
  recordedAt: Date;
}

export interface AppendOptions {
  expectedRevision?: ExpectedRevision;
  /** Copied into every event's metadata unless the event sets its own. */
  correlationId?: string;
  causationId?: string;
}

export interface AppendResult {
  /** Revision of the stream's last event after the append. */
  nextRevision: number;
  /** Position of the last event appended (or of the stored duplicate). */
  position: string;
  /** True when every event id was already stored: nothing was written. */
  duplicate: boolean;
}

/** One append of an appendMany call. */
export interface AppendRequest {
  streamId: string;
  events: readonly NewEvent[];
  options?: AppendOptions;
}

export interface ReadAllOptions {
  /** Exclusive lower bound; START reads from the beginning. */
  after?: string;
  limit?: number;
  /** Only events of these types (applied by the server where the adapter can). */
  eventTypes?: readonly string[];
}

export interface ReadAllPage {
  events: RecordedEvent[];
  /**
   * The position to pass as `after` next time: the last event's position, or a later one the
   * reader has safely passed while filtering. Equals `after` when nothing new was readable.
   */
  lastPosition: string;
  /**
   * The page stopped at the store's byte budget before `limit` events (docs/event-store.md, "Pages
   * by size"): more events may be readable at once.
   */
  cut?: true;
}

export interface SubscribeOptions extends ReadAllOptions {
  /**
   * Called with each batch, in order; the next batch waits for it. A throw stops the subscription.
   * `more`: the batch is full (its limit or its byte budget), so more events may follow at once.
   */
  handle(events: RecordedEvent[], lastPosition: string, more: boolean): Promise<void>;
  signal: AbortSignal;
}

export interface Subscription {
  /** Resolves when the subscription stops (abort), rejects with the handler's error. */
  done: Promise<void>;
}

export interface EventStore {
  append(streamId: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult>;
  /**
   * Several appends in one call, results in input order. Each append is decided exactly as
   * `append` would decide it after the appends before it in the call (several may target one
   * stream): expected revision, idempotent event ids, correlation metadata. An event id may appear
   * only once in a call. When an append is refused (wrong expected revision, ids partly stored),
   * the call rejects with that error and no append from it onwards is written; the PostgreSQL
   * adapter writes nothing of the call (one transaction), other adapters may have written the
   * appends before it, so a retry with the same event ids reports those as duplicates.
   */
  appendMany(appends: readonly AppendRequest[]): Promise<AppendResult[]>;
  /** Events of one stream in revision order, from `fromRevision` (inclusive, default 0). */
  readStream(streamId: string, options?: { fromRevision?: number; limit?: number }): Promise<RecordedEvent[]>;
  /** Committed events after a position, never skipping one whose transaction committed late. */
  readAll(options?: ReadAllOptions): Promise<ReadAllPage>;
  /**
   * Optional: how many events readAll would return after a position (progress of a rebuild).
   * Adapters that cannot count cheaply leave it out.
   */
  countAll?(options?: Omit<ReadAllOptions, 'limit'>): Promise<number>;
  /**
   * The position of the newest event (of these types) committed when called, START when none.
   * It may not be readable at once (readAll never passes a transaction that is still open), so a
   * reader that must see everything committed before a moment reads until it has passed it.
   */
  headPosition?(options?: Pick<ReadAllOptions, 'eventTypes'>): Promise<string>;
  /** Catch-up then live: readAll in a loop, woken by new appends. */
  subscribe(options: SubscribeOptions): Subscription;
  close(): Promise<void>;
}

export const START = '0/0';

const POSITION = /^(0|[1-9][0-9]{0,19})\/(0|[1-9][0-9]{0,19})$/;

/** The two integers of a position; anything this store did not make is a 400 naming the value. */
export function parsePosition(position: string): [major: bigint, minor: bigint] {
  const match = POSITION.exec(position);
  if (!match) {
    throw new BadRequestError(
      'invalid_position',
      `Not an event-store position: ${JSON.stringify(position)}.`,
    );
  }
  return [BigInt(match[1]!), BigInt(match[2]!)];
}

export function formatPosition(major: string | number | bigint, minor: string | number | bigint): string {
  return `${major}/${minor}`;
}

/** Orders two positions of the same store (negative, zero, positive): major first, then minor. */
export function comparePositions(a: string, b: string): number {
  const [am, an] = parsePosition(a);
  const [bm, bn] = parsePosition(b);
  if (am !== bm) return am < bm ? -1 : 1;
  return an === bn ? 0 : an < bn ? -1 : 1;
}

export function laterPosition(a: string, b: string): string {
  return comparePositions(a, b) >= 0 ? a : b;
}
