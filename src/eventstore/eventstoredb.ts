/**
 * The EventStoreDB / KurrentDB adapter of the event-store port (docs/eventstoredb.md).
 */
import { randomUUID } from 'node:crypto';
import {
  type AllStreamRecordedEvent,
  BACKWARDS,
  START as CLIENT_START,
  type RecordedEvent as ClientRecordedEvent,
  END,
  eventTypeFilter,
  FORWARDS,
  type JSONEventData,
  type JSONType,
  jsonEvent,
  KurrentDBClient,
  WrongExpectedVersionError,
} from '@kurrent/kurrentdb-client';
import { ValidationError } from '../errors.ts';
import {
  encodePosition,
  eventTypeRegex,
  exactStreamState,
  fromStoredMetadata,
  isStart,
  normalizeConnectionString,
  redactConnectionString,
  toEventUuid,
  toLogPosition,
  toStoredMetadata,
} from './eventstoredb-codec.ts';
import {
  appendIdempotently,
  type StoredId,
  StreamIdIndex,
  type StreamLog,
} from './eventstoredb-idempotence.ts';
import {
  type AppendOptions,
  type AppendRequest,
  type AppendResult,
  comparePositions,
  type EventStore,
  laterPosition,
  type NewEvent,
  type ReadAllOptions,
  type ReadAllPage,
  type RecordedEvent,
  START,
  type SubscribeOptions,
  type Subscription,
} from './port.ts';

export interface EventStoreDbOptions {
  /** Event ids kept in memory, across streams, to shorten the duplicate check of appends. Default 20000 (about 12 MB). */
  idIndexSize?: number;
  /** Attempts of an `any`/`stream_exists` append while other writers keep moving the stream. Default 10. */
  appendAttempts?: number;
  /** Events per `readAll` page when `limit` is not given, and per subscription batch. Default 500. */
  pageSize?: number;
  /** A subscription reads again after this long even without a live notification, in ms. Default 1000. */
  pollIntervalMs?: number;
  /** Longest wait between reconnection attempts of a subscription, in ms. Default 5000. */
  maxRetryDelayMs?: number;
}

/** The server could not be reached (or lost its leader); retrying later can succeed. */
export class EventStoreUnavailableError extends Error {
  constructor(url: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`EventStoreDB at ${redactConnectionString(url)} is unavailable: ${reason}`, { cause });
    this.name = 'EventStoreUnavailableError';
  }
}

const TRANSIENT_TYPES = new Set(['unavailable', 'deadline-exceeded', 'not-leader', 'timeout']);
const GRPC_UNAVAILABLE = 14;
const GRPC_DEADLINE_EXCEEDED = 4;

export function isTransientError(error: unknown): boolean {
  if (error instanceof EventStoreUnavailableError) return true;
  if (!(error instanceof Error)) return false;
  const { type, code } = error as { type?: unknown; code?: unknown };
  return (
    (typeof type === 'string' && TRANSIENT_TYPES.has(type)) ||
    code === GRPC_UNAVAILABLE ||
    code === GRPC_DEADLINE_EXCEEDED
  );
}

const isStreamNotFound = (error: unknown) =>
  error instanceof Error && (error as { type?: unknown }).type === 'stream-not-found';

interface Proposed {
  uuid: string;
  data: JSONEventData;
}

export function createEventStoreDbStore(
  connectionString: string,
  options: EventStoreDbOptions = {},
): EventStore {
  const url = normalizeConnectionString(connectionString);
  const client = KurrentDBClient.connectionString(url);
  const index = new StreamIdIndex(options.idIndexSize ?? 20_000);
  const appendAttempts = options.appendAttempts ?? 10;
  const pageSize = options.pageSize ?? 500;
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const maxRetryDelayMs = options.maxRetryDelayMs ?? 5000;
  const closing = new AbortController();
  const running = new Set<Promise<void>>();
  const localWakers = new Set<() => void>();

  const unavailable = (error: unknown) =>
    isTransientError(error) && !(error instanceof EventStoreUnavailableError)
      ? new EventStoreUnavailableError(url, error)
      : error;

  async function guard<T>(operation: () => Promise<T>): Promise<T> {
    if (closing.signal.aborted) throw new Error('The EventStoreDB event store is closed.');
    try {
      return await operation();
    } catch (error) {
      throw unavailable(error);
    }
  }

  async function* readStreamEvents(
    streamId: string,
    fromRevision: number,
    { maxCount, requiresLeader = false }: { maxCount?: number | undefined; requiresLeader?: boolean } = {},
  ) {
    try {
      for await (const resolved of client.readStream(streamId, {
        fromRevision: BigInt(fromRevision),
        direction: FORWARDS,
        requiresLeader,
        ...(maxCount === undefined ? {} : { maxCount }),
      })) {
        if (resolved.event) yield resolved.event;
      }
    } catch (error) {
      if (isStreamNotFound(error)) return;
      throw error;
    }
  }

  const log: StreamLog = {
    async readIds(streamId, fromRevision) {
      const ids: StoredId[] = [];
      try {
        for await (const resolved of client.readStream(streamId, {
          fromRevision: BigInt(fromRevision),
          // The check must see what the exact-revision append will be checked against.
          requiresLeader: true,
        })) {
          if (resolved.event)
            ids.push({ uuid: resolved.event.id, revision: Number(resolved.event.revision) });
        }
      } catch (error) {
        if (isStreamNotFound(error)) return { ids: [], lastRevision: -1 };
        throw error;
      }
      // An empty tail: the stream still ends where this process knew it did (streams are append-only;
      // if it was deleted meanwhile, the exact-revision append fails and the next attempt reads it all).
      return { ids, lastRevision: ids.at(-1)?.revision ?? fromRevision - 1 };
    },
    async appendExact(streamId, events, exact) {
      try {
        const result = await client.appendToStream(
          streamId,
          events.map((event) => (event as unknown as Proposed).data),
          { streamState: exactStreamState(exact) },
        );
        if (!result.success) return { ok: false };
        return {
          ok: true,
          nextRevision: Number(result.nextExpectedRevision),
          ...(result.position ? { position: encodePosition(result.position) } : {}),
        };
      } catch (error) {
        if (error instanceof WrongExpectedVersionError) return { ok: false };
        throw error;
      }
    },
  };

  function toRecorded(event: ClientRecordedEvent | AllStreamRecordedEvent): RecordedEvent {
    if (!event.position) {
      throw new Error(
        `EventStoreDB returned event ${event.id} of ${event.streamId} without its log position; earshot needs EventStoreDB 22.10 or later.`,
      );
    }
    const { id, metadata } = fromStoredMetadata(event.id, event.metadata);
    return {
      id,
      streamId: event.streamId,
      revision: Number(event.revision),
      position: encodePosition(event.position),
      type: event.type,
      data: event.data,
      metadata,
      recordedAt: event.created,
    };
  }

  /** Position and append nonce of the event at `revision`, as stored. */
  async function storedAt(streamId: string, revision: number) {
    for await (const event of readStreamEvents(streamId, revision, { maxCount: 1, requiresLeader: true })) {
      const { appendId } = fromStoredMetadata(event.id, event.metadata);
      return { position: event.position && encodePosition(event.position), appendId };
    }
    throw new Error(`EventStoreDB returned no event at ${streamId}@${revision} right after storing it.`);
  }

  async function append(
    streamId: string,
    events: readonly NewEvent[],
    appendOptions: AppendOptions = {},
  ): Promise<AppendResult> {
    if (!streamId || streamId.startsWith('$')) {
      throw new ValidationError(
        'invalid_stream_id',
        `Stream ids must be non-empty and not start with "$" (system streams): ${JSON.stringify(streamId)}.`,
      );
    }
    if (events.length === 0) throw new ValidationError('empty_append', 'An append needs at least one event.');
    const expected = appendOptions.expectedRevision ?? 'any';
    if (typeof expected === 'number' && !(Number.isSafeInteger(expected) && expected >= -1)) {
      throw new ValidationError(
        'invalid_expected_revision',
        `Expected revision must be an integer >= -1, got ${expected}.`,
      );
    }
    const defaults = { correlationId: appendOptions.correlationId, causationId: appendOptions.causationId };
    const appendId = randomUUID();
    const proposed: Proposed[] = events.map((event) => {
      const id = event.id ?? randomUUID();
      const uuid = toEventUuid(id);
      const data = jsonEvent({
        id: uuid,
        type: event.type,
        data: event.data as JSONType,
        metadata: toStoredMetadata(id, event.metadata, defaults, appendId),
      });
      return { uuid, data };
    });
    if (new Set(proposed.map((event) => event.uuid)).size !== proposed.length) {
      throw new ValidationError('duplicate_event_id', 'The events of one append must have distinct ids.');
    }
    return guard(async () => {
      const result = await appendIdempotently(log, index, streamId, proposed, {
        expected,
        maxAttempts: appendAttempts,
      });
      const stored = await storedAt(streamId, result.lastRevision);
      const position = stored.position ?? result.position;
      if (!position) {
        throw new Error(
          `EventStoreDB returned no log position for ${streamId}@${result.lastRevision}; earshot needs EventStoreDB 22.10 or later.`,
        );
      }
      // Success without our nonce: the server recognised ids another call had just stored.
      const duplicate = result.duplicate || stored.appendId !== appendId;
      if (!duplicate) for (const wake of localWakers) wake();
      return { nextRevision: result.nextRevision, position, duplicate };
    });
  }

  /** One append after another (EventStoreDB has no multi-stream transaction): stops at a refusal. */
  async function appendMany(appends: readonly AppendRequest[]): Promise<AppendResult[]> {
    const ids = appends.flatMap((request) => request.events.flatMap((event) => (event.id ? [event.id] : [])));
    if (new Set(ids).size !== ids.length) {
      throw new ValidationError(
        'duplicate_event_id',
        'The events of one appendMany call must have distinct ids, across its appends too.',
      );
    }
    for (const request of appends) {
      if (request.events.length === 0)
        throw new ValidationError('empty_append', 'An append needs at least one event.');
    }
    const results: AppendResult[] = [];
    for (const request of appends)
      results.push(await append(request.streamId, request.events, request.options));
    return results;
  }

  async function readStream(
    streamId: string,
    { fromRevision = 0, limit }: { fromRevision?: number; limit?: number } = {},
  ): Promise<RecordedEvent[]> {
    return guard(async () => {
      const events: RecordedEvent[] = [];
      if (limit === 0) return events;
      for await (const event of readStreamEvents(streamId, fromRevision, { maxCount: limit }))
        events.push(toRecorded(event));
      return events;
    });
  }

  /** The position of the last record in `$all`, system records included (undefined: empty log). */
  async function headPosition(): Promise<string | undefined> {
    for await (const resolved of client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 })) {
      const record = resolved.event ?? resolved.link;
      if (record?.position) return encodePosition(record.position);
    }
    return undefined;
  }

  async function readAll({
    after = START,
    limit = pageSize,
    eventTypes,
  }: ReadAllOptions = {}): Promise<ReadAllPage> {
    const from = toLogPosition(after);
    if (!(Number.isSafeInteger(limit) && limit > 0))
      throw new TypeError(`limit must be a positive integer, got ${limit}`);
    if (eventTypes && eventTypes.length === 0) return { events: [], lastPosition: after };
    return guard(async () => {
      // Read before the page: everything at or before it is committed, so once a page comes back
      // short, the reader has seen every matching event up to here and may skip the rest.
      const head = await headPosition();
      const events: RecordedEvent[] = [];
      // Reads of $all start at the given position itself: ask for one more and drop it.
      for await (const resolved of client.readAll({
        direction: FORWARDS,
        fromPosition: isStart(from) ? CLIENT_START : from,
        maxCount: limit + 1,
        filter: eventTypeFilter({ regex: eventTypeRegex(eventTypes) }),
      })) {
        const event = resolved.event;
        if (
          !event ||
          event.type.startsWith('$') ||
          comparePositions(encodePosition(event.position), after) <= 0
        )
          continue;
        events.push(toRecorded(event));
        if (events.length === limit) break;
      }
      const last = events.at(-1)?.position;
      if (events.length === limit) return { events, lastPosition: last! };
      const reached = [after, last, head].filter((position): position is string => position !== undefined);
      return { events, lastPosition: reached.reduce(laterPosition) };
    });
  }

  function subscribe(subscribeOptions: SubscribeOptions): Subscription {
    const { handle, signal, eventTypes, after = START } = subscribeOptions;
    const limit = subscribeOptions.limit ?? pageSize;
    const stop = AbortSignal.any([signal, closing.signal]);
    const done = (async () => {
      const wake = new Wake(stop);
      localWakers.add(wake.notify);
      const live = watchAll(eventTypes, wake, stop);
      let position = after;
      let failures = 0;
      try {
        while (!stop.aborted) {
          wake.clear();
          let page: ReadAllPage;
          try {
            page = await readAll({ after: position, limit, ...(eventTypes ? { eventTypes } : {}) });
            failures = 0;
          } catch (error) {
            if (stop.aborted) return;
            if (!isTransientError(error)) throw error;
            failures += 1;
            await wake.sleep(Math.min(maxRetryDelayMs, 100 * 2 ** failures));
            continue;
          }
          const more = page.events.length === limit;
          if (page.events.length > 0) await handle(page.events, page.lastPosition, more);
          position = page.lastPosition;
          if (!more) await wake.wait(pollIntervalMs);
        }
      } finally {
        live.stop();
        localWakers.delete(wake.notify);
      }
    })();
    running.add(done);
    done.then(
      () => running.delete(done),
      () => running.delete(done),
    );
    return { done };
  }

  /**
   * A live subscription to `$all` from its end, used only to wake the reader: events reach the
   * handler through `readAll`, so catch-up and live delivery share one path and one position.
   */
  function watchAll(eventTypes: readonly string[] | undefined, wake: Wake, stop: AbortSignal) {
    let current: ReturnType<typeof client.subscribeToAll> | undefined;
    let timer: NodeJS.Timeout | undefined;
    const start = () => {
      if (stop.aborted) return;
      const subscription = client.subscribeToAll({
        fromPosition: END,
        filter: eventTypeFilter({ regex: eventTypeRegex(eventTypes) }),
      });
      current = subscription;
      const restart = () => {
        if (current !== subscription) return;
        current = undefined;
        subscription.removeAllListeners();
        subscription.on('error', () => {});
        void subscription.unsubscribe().catch(() => {});
        wake.notify();
        timer = setTimeout(start, pollIntervalMs);
      };
      subscription.on('data', wake.notify);
      subscription.on('error', restart);
      subscription.on('end', restart);
    };
    start();
    return {
      stop() {
        clearTimeout(timer);
        const subscription = current;
        current = undefined;
        if (subscription) {
          subscription.removeAllListeners();
          subscription.on('error', () => {});
          void subscription.unsubscribe().catch(() => {});
        }
      },
    };
  }

  async function close(): Promise<void> {
    if (closing.signal.aborted) return;
    closing.abort();
    await Promise.allSettled([...running]);
    await client.dispose();
  }

  return {
    append,
    appendMany,
    readStream,
    readAll,
    subscribe,
    close,
  };
}

/** Wakes a waiting reader; a notification that arrives while it is busy is kept for its next wait. */
class Wake {
  #pending = false;
  #resolve: (() => void) | undefined;

  constructor(private readonly stop: AbortSignal) {}

  readonly notify = () => {
    this.#pending = true;
    this.#resolve?.();
  };

  clear(): void {
    this.#pending = false;
  }

  wait(ms: number): Promise<void> {
    if (this.#pending || this.stop.aborted) return Promise.resolve();
    return this.#sleep(ms, true);
  }

  sleep(ms: number): Promise<void> {
    return this.#sleep(ms, false);
  }

  #sleep(ms: number, wakeable: boolean): Promise<void> {
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.stop.removeEventListener('abort', finish);
        if (this.#resolve === finish) this.#resolve = undefined;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.stop.addEventListener('abort', finish, { once: true });
      if (wakeable) this.#resolve = finish;
    });
  }
}
