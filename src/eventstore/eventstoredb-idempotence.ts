/**
 * Deterministic idempotent append on EventStoreDB (docs/eventstoredb.md, "Idempotence").
 *
 * The server's own duplicate detection is a best-effort cache. Instead, every append reads the
 * event ids the stream holds after what this process already knows, drops the events already
 * stored, and appends the rest with the exact revision it read. The server rejects that append if
 * anything was written in between, and the loop reads again: "not in the stream" and "written" are
 * one atomic step, so an id lands at most once per stream whatever the retries, races or crashes.
 */
import { ConflictError, WrongExpectedRevisionError } from '../errors.ts';
import { satisfiesExpected } from './eventstoredb-codec.ts';
import type { ExpectedRevision } from './port.ts';

export interface StoredId {
  uuid: string;
  revision: number;
}

/** The two operations the protocol needs from the server. */
export interface StreamLog {
  /**
   * Ids of the stream's events from `fromRevision` on, in revision order, and the stream's last
   * revision (-1 when it does not exist).
   */
  readIds(streamId: string, fromRevision: number): Promise<{ ids: StoredId[]; lastRevision: number }>;
  /** Appends only if the stream's last revision is exactly `exact` (-1: no stream). */
  appendExact<E extends { uuid: string }>(
    streamId: string,
    events: readonly E[],
    exact: number,
  ): Promise<{ ok: true; nextRevision: number; position?: string } | { ok: false }>;
}

interface Known {
  revision: number;
  ids: Map<string, number>;
}

/**
 * What this process knows of streams' ids, an LRU bounded by the number of ids held. Only facts
 * are recorded (an id at a revision, a contiguous prefix read or written), so a stale or evicted
 * entry costs a longer read, never a wrong answer.
 */
export class StreamIdIndex {
  readonly #streams = new Map<string, Known>();
  #size = 0;

  constructor(readonly maxIds: number) {}

  get size(): number {
    return this.#size;
  }

  get(streamId: string): Known | undefined {
    const known = this.#streams.get(streamId);
    if (known) {
      this.#streams.delete(streamId);
      this.#streams.set(streamId, known);
    }
    return known;
  }

  /** Records ids at revisions `fromRevision..toRevision`, if they extend what is known without a gap. */
  extend(streamId: string, fromRevision: number, toRevision: number, ids: readonly StoredId[]): void {
    let known = this.#streams.get(streamId);
    if (!known) {
      if (fromRevision !== 0) return;
      known = { revision: -1, ids: new Map() };
      this.#streams.set(streamId, known);
    }
    if (known.revision !== fromRevision - 1 || toRevision < known.revision) return;
    for (const { uuid, revision } of ids) {
      if (!known.ids.has(uuid)) this.#size += 1;
      known.ids.set(uuid, revision);
    }
    known.revision = toRevision;
    this.#evict();
  }

  forget(streamId: string): void {
    const known = this.#streams.get(streamId);
    if (!known) return;
    this.#size -= known.ids.size;
    this.#streams.delete(streamId);
  }

  #evict(): void {
    for (const streamId of this.#streams.keys()) {
      if (this.#size <= this.maxIds) return;
      this.forget(streamId);
    }
  }
}

export interface IdempotentAppendResult {
  nextRevision: number;
  duplicate: boolean;
  /** Revision of the last event appended, or of the last stored duplicate. */
  lastRevision: number;
  /** The position the server reported for the append, if any. */
  position?: string;
}

export interface IdempotentAppendOptions {
  expected: ExpectedRevision;
  /** Attempts when other writers keep moving the stream under an `any`/`stream_exists` append. */
  maxAttempts: number;
}

export async function appendIdempotently<E extends { uuid: string }>(
  log: StreamLog,
  index: StreamIdIndex,
  streamId: string,
  events: readonly E[],
  { expected, maxAttempts }: IdempotentAppendOptions,
): Promise<IdempotentAppendResult> {
  let actual = -1;
  let emptyTailRejected = false;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const known = index.get(streamId);
    const from = (known?.revision ?? -1) + 1;
    const read = await log.readIds(streamId, from);
    if (read.lastRevision < from - 1) {
      // The stream is shorter than what we knew: it was deleted. Start over from nothing.
      index.forget(streamId);
      if (attempt === maxAttempts) break;
      continue;
    }
    index.extend(streamId, from, read.lastRevision, read.ids);
    const readNow = new Map(read.ids.map(({ uuid, revision }) => [uuid, revision]));
    const storedAt = (uuid: string) => readNow.get(uuid) ?? known?.ids.get(uuid);
    actual = read.lastRevision;

    const stored = events.filter((event) => storedAt(event.uuid) !== undefined).length;
    if (stored === events.length) {
      // As the PostgreSQL adapter does: the result of the append that stored them.
      const lastRevision = storedAt(events.at(-1)!.uuid)!;
      return { nextRevision: lastRevision, duplicate: true, lastRevision };
    }
    if (stored > 0) {
      throw new ConflictError(
        'duplicate_event_id',
        `Some but not all events of this append to ${streamId} are already stored: an event id was reused.`,
      );
    }
    if (!satisfiesExpected(expected, actual)) {
      throw new WrongExpectedRevisionError(streamId, expected, actual);
    }
    const result = await log.appendExact(streamId, events, actual);
    if (!result.ok) {
      // Twice an empty tail yet a moved stream: not a race but a stream deleted and recreated.
      if (read.ids.length === 0 && emptyTailRejected) index.forget(streamId);
      emptyTailRejected = read.ids.length === 0;
      continue;
    }
    const written = events.map((event, i) => ({ uuid: event.uuid, revision: actual + 1 + i }));
    index.extend(streamId, actual + 1, result.nextRevision, written);
    return {
      nextRevision: result.nextRevision,
      duplicate: false,
      lastRevision: result.nextRevision,
      ...(result.position === undefined ? {} : { position: result.position }),
    };
  }
  throw new WrongExpectedRevisionError(streamId, expected, actual);
}
