import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { Db, Queryable } from '../db/db.ts';
import { Wakeup } from '../db/wakeup.ts';
import { ConflictError, ValidationError, WrongExpectedRevisionError } from '../errors.ts';
import type {
  AppendOptions,
  AppendRequest,
  AppendResult,
  EventMetadata,
  EventStore,
  NewEvent,
  ReadAllOptions,
  ReadAllPage,
  RecordedEvent,
  SubscribeOptions,
  Subscription,
} from './port.ts';
import { comparePositions, formatPosition, parsePosition, START } from './port.ts';

/** The channel append_events notifies on each append (schemas/migrations/0002_eventstore.sql). */
export const EVENTS_CHANNEL = 'earshot_events';

export interface PostgresEventStoreOptions {
  /** Events per readAll page when the caller gives no limit, and per subscription batch. Default 1000. */
  pageSize?: number;
  /**
   * Bytes of events (data and metadata as JSON text) after which a page stops before its limit;
   * a page always holds at least one event. Default PAGE_BYTES.
   */
  pageBytes?: number;
  /**
   * How long a caught-up subscriber waits for a notification before reading again, in ms.
   * Default 200: an event can become readable without a new append, when an unrelated
   * transaction that held the visibility horizon back ends.
   */
  pollIntervalMs?: number;
}

export interface PostgresEventStore extends EventStore {
  /**
   * One round trip and one transaction (append_events_many): all or nothing. A refused append
   * leaves every append of the call unwritten.
   */
  appendMany(appends: readonly AppendRequest[]): Promise<AppendResult[]>;
  /**
   * Appends inside the caller's transaction, so events and the caller's own rows commit together.
   * Throws StreamOrderConflictError when a writer with a newer transaction appended to the stream
   * first: roll back and retry the whole transaction.
   */
  appendInTransaction(
    tx: Queryable,
    streamId: string,
    events: readonly NewEvent[],
    options?: AppendOptions,
  ): Promise<AppendResult>;
  /** Number of events readAll would return after `after` (for progress bars). */
  countAll(options?: Omit<ReadAllOptions, 'limit'>): Promise<number>;
}

/**
 * The stream's last event was appended by a transaction newer than this one: appending now would
 * list this revision before the earlier one in "all". Retrying in a new transaction succeeds.
 */
export class StreamOrderConflictError extends ConflictError {
  constructor(readonly streamId: string) {
    super(
      'concurrent_modification',
      `Stream ${streamId} was appended to by a newer transaction; retry in a new transaction.`,
    );
  }
}

interface AppendRow {
  status: 'appended' | 'duplicate' | 'partial_duplicate' | 'wrong_revision' | 'reordered';
  revision: number;
  transaction_id: string | null;
  global_position: number | null;
}

/** A page's default byte budget: 32 MiB (docs/event-store.md, "Pages by size"). */
export const PAGE_BYTES = 32 * 1024 * 1024;

interface EventRow {
  /** The page's bytes up to and including this event. */
  through_bytes: number;
  tx: string;
  gp: number;
  stream_id: string;
  stream_revision: number;
  event_id: string;
  type: string;
  data: unknown;
  metadata: EventMetadata;
  recorded_ms: number;
}

// recorded_at as epoch milliseconds: parsing a number is cheaper than a timestamp string, and
// catch-up reading is bound by row parsing.
const EVENT_COLUMNS = `e.transaction_id::text as tx, e.global_position as gp, e.stream_id, e.stream_revision,
  e.event_id, e.type, e.data, e.metadata, (extract(epoch from e.recorded_at) * 1000)::float8 as recorded_ms`;

// Only transactions below the snapshot's xmin are certainly finished: anything at or above it may
// still commit with a lower global_position than events already read (STYLE.md, SQL).
const VISIBLE = 'e.transaction_id < pg_snapshot_xmin(pg_current_snapshot())';
const AFTER = '(e.transaction_id, e.global_position) > ($1::xid8, $2::bigint)';

// An event's size as appended (0265); one appended before has none and counts its stored size.
const BYTES = 'coalesce(e.data_bytes, pg_column_size(e.data) + pg_column_size(e.metadata))';
// The page's bytes through each row, in read order: a row is kept while the rows before it hold
// less than the budget ($4), so the first always is. Rows past it are counted, never sent.
const THROUGH_BYTES = 'sum(bytes) over (order by xid, gp rows unbounded preceding)::float8';

const READ_ALL = `select p.* from (
  select r.*, ${THROUGH_BYTES} as through_bytes from (
    select e.transaction_id as xid, ${BYTES} as bytes, ${EVENT_COLUMNS} from events e
     where ${AFTER} and ${VISIBLE}
     order by e.transaction_id, e.global_position
     limit $3) r) p
  where p.through_bytes - p.bytes < $4
  order by p.xid, p.gp`;

// One ordered index range per type (events_type), merged; head is the last visible event of any
// type, read in the same snapshot, so a filtered reader can move past events it does not want.
// Each type is its own branch with its own parameter ($4, $5, …): PostgreSQL plans each for that
// type's statistics (a prepared poll may keep a generic plan instead: docs/event-store.md,
// "Reading"). One plan for every type of a list (a lateral join over the types) was made for a
// common type on an analyzed store: the primary key walked from `after`, filtered by type, which for
// a type with fewer later events than the page went to the end of the store, on every page
// (docs/event-store.md, "Reading").
/**
 * A statement with one branch per event type, each comparing `e.type` with its own parameter
 * (`$first`, `$first + 1`, …), joined by `union all`; built once per number of types.
 */
function perTypeStatement(
  first: number,
  branch: (type: string) => string,
  around: (branches: string) => string,
) {
  const built = new Map<number, string>();
  return (typeCount: number): string => {
    let sql = built.get(typeCount);
    if (sql === undefined) {
      const branches = Array.from({ length: typeCount }, (_, k) => branch(`$${first + k}`));
      sql = around(branches.join(' union all '));
      built.set(typeCount, sql);
    }
    return sql;
  };
}

const readAllFiltered = perTypeStatement(
  5,
  (type) => `(select e.transaction_id as xid, ${BYTES} as bytes, ${EVENT_COLUMNS} from events e
     where e.type = ${type} and ${AFTER} and ${VISIBLE}
     order by e.transaction_id, e.global_position
     limit $3)`,
  (branches) => `select h.head, p.* from
  (select (select e.transaction_id::text || '/' || e.global_position from events e
           where ${VISIBLE} order by e.transaction_id desc, e.global_position desc limit 1) as head) h
  left join lateral (
    select r.* from (
      select f.*, ${THROUGH_BYTES} as through_bytes from (
        select f.* from (${branches}) f
        order by f.xid, f.gp
        limit $3) f) r
    where r.through_bytes - r.bytes < $4
  ) p on true
  order by p.xid, p.gp`,
);

// The newest committed event in this snapshot, readable by readAll or not yet; per type, one
// backward step of that type's index range, each type a branch of its own as in readAllFiltered.
const HEAD = `select e.transaction_id::text || '/' || e.global_position as head from events e
  order by e.transaction_id desc, e.global_position desc limit 1`;
const headFiltered = perTypeStatement(
  1,
  (type) => `(select e.transaction_id, e.global_position from events e where e.type = ${type}
     order by e.transaction_id desc, e.global_position desc limit 1)`,
  (branches) => `select h.transaction_id::text || '/' || h.global_position as head
  from (${branches}) h
  order by h.transaction_id desc, h.global_position desc limit 1`,
);

const COUNT_ALL = `select count(*) as n from events e
  where ${AFTER} and ${VISIBLE} and ($3::text[] is null or e.type = any ($3::text[]))`;

const READ_STREAM = `select ${EVENT_COLUMNS} from events e
  where e.stream_id = $1 and e.stream_revision >= $2
  order by e.stream_revision
  limit $3`;

const APPEND =
  'select * from append_events($1, $2, $3, $4::text[], $5::text[], $6::json, $7::json, $8::boolean)';

const APPEND_MANY = `select * from append_events_many($1::text[], $2::text[], $3::bigint[], $4::int[],
  $5::text[], $6::text[], $7::text[], $8::json, $9::json)`;

const MAX_REORDER_RETRIES = 10;

/** A position as the ($1::xid8, $2::bigint) parameters of AFTER. */
const positionParams = (position: string) => parsePosition(position).map(String) as [string, string];

function toRecorded(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    streamId: row.stream_id,
    revision: row.stream_revision,
    position: formatPosition(row.tx, row.gp),
    type: row.type,
    data: row.data,
    metadata: row.metadata,
    recordedAt: new Date(row.recorded_ms),
  };
}

function withContext(event: NewEvent, options: AppendOptions): EventMetadata {
  const metadata: EventMetadata = {};
  if (options.correlationId !== undefined) metadata.correlationId = options.correlationId;
  if (options.causationId !== undefined) metadata.causationId = options.causationId;
  for (const [key, value] of Object.entries(event.metadata ?? {})) {
    if (value !== undefined) metadata[key] = value;
  }
  return metadata;
}

interface PreparedAppend {
  streamId: string;
  /** 'any' | 'no_stream' | 'stream_exists' | 'exact', as append_events takes it. */
  expected: string;
  expectedRevision: number | null;
  ids: string[];
}

function prepareAppend(
  streamId: string,
  events: readonly NewEvent[],
  options: AppendOptions,
): PreparedAppend {
  if (events.length === 0) throw new ValidationError('empty_append', 'An append needs at least one event.');
  const expected = options.expectedRevision ?? 'any';
  if (typeof expected === 'number' && !(Number.isInteger(expected) && expected >= -1)) {
    throw new ValidationError(
      'invalid_expected_revision',
      `Expected revision must be an integer >= -1, got ${expected}.`,
    );
  }
  const ids = events.map((event) => event.id ?? randomUUID());
  if (new Set(ids).size !== ids.length) {
    throw new ValidationError('duplicate_event_id', 'The events of one append must have distinct ids.');
  }
  return {
    streamId,
    expected: typeof expected === 'number' ? 'exact' : expected,
    expectedRevision: typeof expected === 'number' ? expected : null,
    ids,
  };
}

function appendParams(
  prepared: PreparedAppend,
  events: readonly NewEvent[],
  options: AppendOptions,
): unknown[] {
  return [
    prepared.streamId,
    prepared.expected,
    prepared.expectedRevision,
    prepared.ids,
    events.map((event) => event.type),
    JSON.stringify(events.map((event) => event.data ?? null)),
    JSON.stringify(events.map((event) => withContext(event, options))),
  ];
}

/**
 * Parameters of append_events_many: per-append arrays, then per-event arrays in input order.
 * Data and metadata go as one JSON array each: one stringify, no array-literal escaping of large
 * documents.
 */
function appendManyParams(appends: readonly AppendRequest[]): {
  prepared: PreparedAppend[];
  params: unknown[];
} {
  const prepared = appends.map((append) =>
    prepareAppend(append.streamId, append.events, append.options ?? {}),
  );
  const ids = prepared.flatMap((append) => append.ids);
  if (new Set(ids).size !== ids.length) {
    throw new ValidationError(
      'duplicate_event_id',
      'The events of one appendMany call must have distinct ids, across its appends too.',
    );
  }
  const appendOf: number[] = [];
  const streamOf: string[] = [];
  const types: string[] = [];
  const data: unknown[] = [];
  const metadata: EventMetadata[] = [];
  appends.forEach((append, index) => {
    const options = append.options ?? {};
    for (const event of append.events) {
      appendOf.push(index + 1);
      streamOf.push(append.streamId);
      types.push(event.type);
      data.push(event.data ?? null);
      metadata.push(withContext(event, options));
    }
  });
  return {
    prepared,
    params: [
      prepared.map((append) => append.streamId),
      prepared.map((append) => append.expected),
      prepared.map((append) => append.expectedRevision),
      appendOf,
      streamOf,
      ids,
      types,
      JSON.stringify(data),
      JSON.stringify(metadata),
    ],
  };
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '23505';
}

function isDeadlock(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '40P01';
}

export function createPostgresEventStore(
  db: Db,
  options: PostgresEventStoreOptions = {},
): PostgresEventStore {
  const pageSize = options.pageSize ?? 1000;
  const pageBytes = options.pageBytes ?? PAGE_BYTES;
  const pollIntervalMs = options.pollIntervalMs ?? 200;
  const wakeups = new Wakeup(db, EVENTS_CHANNEL);
  const closing = new AbortController();
  // Every subscription of this store waits on it.
  setMaxListeners(0, closing.signal);

  async function callAppend(q: Queryable, params: unknown[], notify: boolean): Promise<AppendRow> {
    const { rows } = await q.query<AppendRow>(APPEND, [...params, notify]);
    const row = rows[0];
    if (!row) throw new Error('append_events returned no row');
    return row;
  }

  function result(prepared: PreparedAppend, row: AppendRow): AppendResult {
    const { streamId } = prepared;
    switch (row.status) {
      case 'appended':
      case 'duplicate':
        return {
          nextRevision: row.revision,
          position: formatPosition(row.transaction_id!, row.global_position!),
          duplicate: row.status === 'duplicate',
        };
      case 'wrong_revision': {
        const expected = prepared.expected === 'exact' ? prepared.expectedRevision! : prepared.expected;
        throw new WrongExpectedRevisionError(streamId, expected, row.revision);
      }
      case 'partial_duplicate':
        throw new ConflictError(
          'duplicate_event_id',
          `Some but not all events of this append to ${streamId} are already stored: an event id was reused.`,
        );
      case 'reordered':
        throw new StreamOrderConflictError(streamId);
    }
  }

  /**
   * A page short of its limit whose events reached the byte budget may have stopped there: more
   * events can follow at once, and a filtered reader must not pass them.
   */
  function cutAt(rows: readonly EventRow[], limit: number): { cut: true } | undefined {
    const last = rows.at(-1);
    return rows.length < limit && last !== undefined && last.through_bytes >= pageBytes
      ? { cut: true }
      : undefined;
  }

  /**
   * `walk`: a filtered read walks each type's `events_type` range in order, in a transaction of its
   * own (docs/event-store.md, "Reading"); a subscriber caught up polls without it.
   */
  async function readAll(readOptions: ReadAllOptions = {}, walk = true): Promise<ReadAllPage> {
    const after = readOptions.after ?? START;
    const [xid, gp] = positionParams(after);
    const limit = readOptions.limit ?? pageSize;
    if (!Number.isInteger(limit) || limit < 1) {
      throw new ValidationError('invalid_limit', `A read limit must be a positive integer, got ${limit}.`);
    }
    const types = readOptions.eventTypes;
    if (!types) {
      const { rows } = await db.query<EventRow>(READ_ALL, [xid, gp, limit, pageBytes], {
        name: 'earshot_read_all',
      });
      const events = rows.map(toRecorded);
      return { events, lastPosition: events.at(-1)?.position ?? after, ...cutAt(rows, limit) };
    }
    if (types.length === 0) return { events: [], lastPosition: after };
    const distinct = [...new Set(types)];
    const sql = readAllFiltered(distinct.length);
    const params = [xid, gp, limit, pageBytes, ...distinct];
    // A bitmap scan would read all of a type's later events before sorting; the planner chooses it
    // when it guesses few (a store not analyzed since a bulk append), and a catch-up then costs the
    // square of the backlog (docs/event-store.md, "Reading").
    const { rows } = walk
      ? await db.transaction(async (tx) => {
          await tx.query('set local enable_bitmapscan = off');
          return tx.query<EventRow & { head: string | null }>(sql, params);
        })
      : // A caught-up subscriber's read, the one a write wakes every subscriber to: kept prepared,
        // not planned anew each time (docs/event-store.md, "Reading"). Not the walk: its planner
        // setting would not reach a plan kept from before it.
        await db.query<EventRow & { head: string | null }>(sql, params, {
          name: `earshot_read_all_${distinct.length}`,
        });
    const read = rows.filter((row) => row.event_id !== null);
    const events = read.map(toRecorded);
    const cut = cutAt(read, limit);
    if (events.length === limit || cut) return { events, lastPosition: events.at(-1)!.position, ...cut };
    const head = rows[0]?.head;
    return { events, lastPosition: head && comparePositions(head, after) > 0 ? head : after };
  }

  return {
    async append(streamId, events, appendOptions = {}) {
      const prepared = prepareAppend(streamId, events, appendOptions);
      const params = appendParams(prepared, events, appendOptions);
      for (let attempt = 0; ; attempt++) {
        let row: AppendRow;
        try {
          row = await callAppend(db, params, false);
        } catch (error) {
          // The same ids were appended to another stream at the same moment: the next call sees them.
          if (isUniqueViolation(error) && attempt < MAX_REORDER_RETRIES) continue;
          throw error;
        }
        if (row.status === 'reordered' && attempt < MAX_REORDER_RETRIES) continue;
        if (row.status === 'appended') wakeups.announce();
        return result(prepared, row);
      }
    },

    async appendMany(appends) {
      if (appends.length === 0) return [];
      const { prepared, params } = appendManyParams(appends);
      for (let attempt = 0; ; attempt++) {
        let rows: AppendRow[];
        try {
          ({ rows } = await db.query<AppendRow>(APPEND_MANY, params));
        } catch (error) {
          // Another call stored some of these ids at the same moment (the retry sees them as
          // duplicates), or two calls met the same ids in different orders: retry the whole call.
          if ((isUniqueViolation(error) || isDeadlock(error)) && attempt < MAX_REORDER_RETRIES) continue;
          throw error;
        }
        if (rows.length !== appends.length) {
          throw new Error(`append_events_many returned ${rows.length} rows for ${appends.length} appends`);
        }
        const refused = rows.findIndex((row) => row.status !== 'appended' && row.status !== 'duplicate');
        if (refused >= 0) {
          // Nothing was written. A newer transaction got to a stream first: a new one will not.
          if (rows[refused]!.status === 'reordered' && attempt < MAX_REORDER_RETRIES) continue;
          result(prepared[refused]!, rows[refused]!);
        }
        if (rows.some((row) => row.status === 'appended')) wakeups.announce();
        return rows.map((row, index) => result(prepared[index]!, row));
      }
    },

    async appendInTransaction(tx, streamId, events, appendOptions = {}) {
      const prepared = prepareAppend(streamId, events, appendOptions);
      const params = appendParams(prepared, events, appendOptions);
      try {
        return result(prepared, await callAppend(tx, params, true));
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        throw new ConflictError(
          'concurrent_modification',
          `Another append stored some of these event ids at the same moment; retry in a new transaction to get its result.`,
          [],
          { cause: error },
        );
      }
    },

    async readStream(streamId, readOptions = {}) {
      const { rows } = await db.query<EventRow>(READ_STREAM, [
        streamId,
        readOptions.fromRevision ?? 0,
        readOptions.limit ?? null,
      ]);
      return rows.map(toRecorded);
    },

    readAll,

    async headPosition(headOptions = {}) {
      const types = headOptions.eventTypes && [...new Set(headOptions.eventTypes)];
      if (types?.length === 0) return START;
      const { rows } = types
        ? await db.query<{ head: string }>(headFiltered(types.length), types)
        : await db.query<{ head: string }>(HEAD);
      return rows[0]?.head ?? START;
    },

    async countAll(countOptions = {}) {
      const [xid, gp] = positionParams(countOptions.after ?? START);
      const { rows } = await db.query<{ n: number }>(COUNT_ALL, [xid, gp, countOptions.eventTypes ?? null]);
      return rows[0]?.n ?? 0;
    },

    subscribe(subscribeOptions: SubscribeOptions): Subscription {
      const { handle, signal, eventTypes } = subscribeOptions;
      const limit = subscribeOptions.limit ?? pageSize;
      const done = (async () => {
        if (closing.signal.aborted) throw new Error('The event store is closed.');
        await wakeups.start();
        let position = subscribeOptions.after ?? START;
        parsePosition(position);
        // Behind until a page comes back short: only then is the read's ordered walk worth its
        // transaction's round trips (docs/event-store.md, "Reading").
        let behind = true;
        while (!signal.aborted && !closing.signal.aborted) {
          const seen = wakeups.generation;
          const page = await readAll(
            { after: position, limit, ...(eventTypes ? { eventTypes } : {}) },
            behind,
          );
          behind = page.events.length === limit || page.cut === true;
          if (page.events.length > 0) await handle(page.events, page.lastPosition, behind);
          position = page.lastPosition;
          if (!behind) await wakeups.wait(seen, pollIntervalMs, [signal, closing.signal]);
        }
      })();
      return { done };
    },

    async close() {
      closing.abort();
      await wakeups.stop();
    },
  };
}
