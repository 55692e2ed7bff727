import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, Queryable } from '../../src/db/db.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { BadRequestError, ConflictError, ValidationError } from '../../src/errors.ts';
import type { NewEvent, ReadAllOptions, ReadAllPage, RecordedEvent } from '../../src/eventstore/port.ts';
import { comparePositions, START } from '../../src/eventstore/port.ts';
import {
  createPostgresEventStore,
  EVENTS_CHANNEL,
  type PostgresEventStore,
  StreamOrderConflictError,
} from '../../src/eventstore/postgres.ts';
import {
  createDb,
  createPgliteDb,
  createTestDb,
  ENGINES,
  TEST_DATABASE_URL,
  type TestDb,
} from '../support/db.ts';
import { describeEventStoreContract, readAllUntil } from './contract.ts';

describeEventStoreContract('PostgreSQL', async () => {
  const testDb = await createTestDb({ max: 20 });
  const store = createPostgresEventStore(testDb.db);
  return {
    store,
    async cleanup() {
      await store.close();
      await testDb.drop();
    },
  };
});

describeEventStoreContract('PGlite', async () => {
  const db = await createPgliteDb();
  const store = createPostgresEventStore(db);
  return {
    store,
    async cleanup() {
      await store.close();
      await db.close();
    },
  };
});

const event = (type = 'ThingHappened', data: unknown = {}): NewEvent => ({ id: randomUUID(), type, data });

describe.each(ENGINES)('PostgreSQL event store on %s', (engine) => {
  let db: Db;
  let drop: () => Promise<void>;
  let store: PostgresEventStore;
  beforeAll(async () => {
    ({ db, drop } = await createDb(engine));
    store = createPostgresEventStore(db);
  });
  afterAll(async () => {
    await store.close();
    await drop();
  });

  it('encodes positions as "<transaction id>/<global position>" after START', async () => {
    const result = await store.append(`pos-${randomUUID()}`, [event(), event()]);
    expect(START).toBe('0/0');
    expect(result.position).toMatch(/^\d+\/\d+$/);
    const { rows } = await db.query<{ tx: string; gp: number }>(
      'select transaction_id::text as tx, global_position as gp from events order by global_position desc limit 1',
    );
    expect(result.position).toBe(`${rows[0]?.tx}/${rows[0]?.gp}`);
  });

  it('reads a filtered page as the unfiltered pages filtered, on a store never analyzed', async () => {
    // Varied appends (several transactions, types interleaved); readAll of some types must be the
    // unfiltered stream filtered, page after page, whatever plan reads it (docs/event-store.md, Reading).
    const types = ['A', 'B', 'C'].map((t) => `Filtered${t}_${randomUUID().slice(0, 8)}`);
    const from = (await store.readAll({ eventTypes: ['NothingOfThisType'] })).lastPosition;
    for (let append = 0; append < 12; append++)
      await store.append(
        `filtered-${randomUUID()}`,
        Array.from({ length: 1 + ((append * 7) % 9) }, (_, k) =>
          event(types[(append + k * k) % 3], { append, k }),
        ),
      );
    const readAll = async (eventTypes: string[] | undefined, limit: number) => {
      const ids: string[] = [];
      let after = from;
      for (;;) {
        const page = await store.readAll({ after, limit, ...(eventTypes ? { eventTypes } : {}) });
        ids.push(...page.events.map((e) => e.id));
        if (page.lastPosition === after) return ids;
        after = page.lastPosition;
      }
    };
    const appended = Array.from({ length: 12 }, (_, a) => 1 + ((a * 7) % 9)).reduce((x, y) => x + y);
    // The store reads only events no running transaction can still precede: one open elsewhere in
    // the cluster (another test file's) holds them back until it ends.
    let all = await store.readAll({ after: from, limit: 1000 });
    for (const end = Date.now() + 30_000; all.events.length < appended && Date.now() < end; ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      all = await store.readAll({ after: from, limit: 1000 });
    }
    expect(all.events.length).toBe(appended);
    for (const wanted of [[types[0]!], [types[1]!, types[2]!], types])
      for (const limit of [1, 3, 7, 1000]) {
        const expected = all.events.filter((e) => wanted.includes(e.type)).map((e) => e.id);
        expect(await readAll(wanted, limit)).toEqual(expected);
      }
  });

  it('reads and heads a list with repeated, absent and many types as the unfiltered stream filtered', async () => {
    // One branch and parameter a distinct type (docs/event-store.md, Reading): a type listed twice
    // is read once, a type without events adds nothing, and 40 types page as one.
    const types = Array.from({ length: 5 }, (_, k) => `Many${k}_${randomUUID().slice(0, 8)}`);
    const absent = Array.from({ length: 36 }, (_, k) => `Absent${k}_${randomUUID().slice(0, 8)}`);
    const from = (await store.readAll({ eventTypes: ['NothingOfThisType'] })).lastPosition;
    let appended = 0;
    for (let append = 0; append < 10; append++) {
      const length = 1 + ((append * 5) % 7);
      appended += length;
      await store.append(
        `many-${randomUUID()}`,
        Array.from({ length }, (_, k) => event(types[(append * 3 + k) % 5])),
      );
    }
    let all = await store.readAll({ after: from, limit: 1000 });
    for (const end = Date.now() + 30_000; all.events.length < appended && Date.now() < end; ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      all = await store.readAll({ after: from, limit: 1000 });
    }
    expect(all.events.length).toBe(appended);
    const lists = [
      [types[0]!, types[0]!],
      [types[1]!, absent[0]!, types[1]!, types[2]!],
      [...absent, ...types.slice(0, 4)],
      [absent[1]!],
    ];
    for (const wanted of lists) {
      const expected = all.events.filter((e) => wanted.includes(e.type));
      for (const limit of [1, 4, 1000]) {
        const ids: string[] = [];
        let after = from;
        for (let pages = 0; pages < 100; pages++) {
          const page = await store.readAll({ after, limit, eventTypes: wanted });
          const next = expected.filter((e) => comparePositions(e.position, after) > 0).slice(0, limit);
          expect(page.events.map((e) => e.id)).toEqual(next.map((e) => e.id));
          ids.push(...page.events.map((e) => e.id));
          if (page.lastPosition === after) break;
          after = page.lastPosition;
        }
        expect(ids).toEqual(expected.map((e) => e.id));
      }
      expect(await store.headPosition!({ eventTypes: wanted })).toBe(expected.at(-1)?.position ?? START);
    }
    expect(await store.headPosition!({ eventTypes: [] })).toBe(START);
    expect(await store.readAll({ after: from, eventTypes: [] })).toEqual({ events: [], lastPosition: from });
  });

  it('walks in a transaction while a subscriber is behind, and polls with one statement once caught up', async () => {
    // docs/event-store.md, "Reading": the walk's transaction only while pages come back full.
    let transactions = 0;
    const counted: Db = Object.assign(Object.create(db) as Db, {
      transaction: <T>(fn: (tx: Queryable) => Promise<T>) => {
        transactions++;
        return db.transaction(fn);
      },
    });
    const watched = createPostgresEventStore(counted, { pollIntervalMs: 10 });
    const type = `Walked_${randomUUID().slice(0, 8)}`;
    const from = (await store.readAll({ eventTypes: ['NothingOfThisType'] })).lastPosition;
    await store.append(
      `walk-${randomUUID()}`,
      Array.from({ length: 7 }, () => event(type)),
    );
    // Readable first: another test file's open transaction can hold them back (docs/event-store.md,
    // "Ordering and visibility"), and the subscriber's empty reads meanwhile would not walk.
    await readAllUntil(store, { eventTypes: [type] }, 7);
    const pages: number[] = [];
    const controller = new AbortController();
    const subscription = watched.subscribe({
      after: from,
      eventTypes: [type],
      limit: 3,
      signal: controller.signal,
      handle: async (events) => {
        pages.push(events.length);
      },
    });
    await expect.poll(() => pages.reduce((a, b) => a + b, 0)).toBe(7);
    // Pages of 3, 3, then 1: the first three reads walked, the short one ended the walk.
    expect(pages).toEqual([3, 3, 1]);
    expect(transactions).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(transactions).toBe(3);
    await store.append(
      `walk-${randomUUID()}`,
      Array.from({ length: 4 }, () => event(type)),
    );
    await expect.poll(() => pages.reduce((a, b) => a + b, 0), { timeout: 10_000 }).toBe(11);
    // The first page after the burst is read plainly, then the walk resumes after its full page.
    expect(transactions).toBeGreaterThan(3);
    controller.abort();
    await subscription.done.catch(() => undefined);
    await watched.close();
  });

  it('rejects a position that is not one of its own', async () => {
    await expect(store.readAll({ after: 'nonsense' })).rejects.toBeInstanceOf(BadRequestError);
    await expect(store.readAll({ after: '12' })).rejects.toMatchObject({ errorCode: 'invalid_position' });
    await expect(store.readAll({ limit: 0 })).rejects.toMatchObject({ errorCode: 'invalid_limit' });
  });

  it('rejects an empty append and a batch that repeats an id', async () => {
    await expect(store.append('empty', [])).rejects.toBeInstanceOf(ValidationError);
    const repeated = event();
    await expect(store.append('repeated', [repeated, repeated])).rejects.toMatchObject({
      errorCode: 'duplicate_event_id',
    });
  });

  it('stores an event id once across streams: a repeat in another stream is a duplicate', async () => {
    const shared = event();
    const first = await store.append(`a-${randomUUID()}`, [shared]);
    const again = await store.append(`b-${randomUUID()}`, [shared]);
    expect(again).toEqual({ ...first, duplicate: true });
  });

  it('refuses a batch of which only some ids are stored', async () => {
    const stream = `partial-${randomUUID()}`;
    const stored = event();
    await store.append(stream, [stored]);
    const error = await store.append(stream, [stored, event()]).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ errorCode: 'duplicate_event_id' });
    expect(await store.readStream(stream)).toHaveLength(1);
  });

  it('appends inside a caller transaction, committing with its rows or not at all', async () => {
    await db.exec('create table if not exists side_rows (id text primary key)');
    const committed = `tx-ok-${randomUUID()}`;
    await db.transaction(async (tx) => {
      await store.appendInTransaction(tx, committed, [event()], { expectedRevision: 'no_stream' });
      await tx.query('insert into side_rows (id) values ($1)', [committed]);
    });
    expect(await store.readStream(committed)).toHaveLength(1);

    const rolledBack = `tx-fail-${randomUUID()}`;
    await expect(
      db.transaction(async (tx) => {
        await store.appendInTransaction(tx, rolledBack, [event()]);
        await tx.query('insert into side_rows (id) values ($1)', [rolledBack]);
        throw new Error('abandon');
      }),
    ).rejects.toThrow('abandon');
    expect(await store.readStream(rolledBack)).toEqual([]);
    const { rows } = await db.query('select id from side_rows where id = $1', [rolledBack]);
    expect(rows).toEqual([]);
    // The stream stays appendable as new: the rolled-back append left no revision behind.
    await store.append(rolledBack, [event()], { expectedRevision: 'no_stream' });
  });

  it('writes nothing of an appendMany call when one of its appends is refused', async () => {
    const existing = `many-existing-${randomUUID()}`;
    await store.append(existing, [event()]);
    const written = `many-first-${randomUUID()}`;
    await expect(
      store.appendMany([
        { streamId: written, events: [event(), event()] },
        { streamId: existing, events: [event()], options: { expectedRevision: 5 } },
      ]),
    ).rejects.toMatchObject({ streamId: existing, expected: 5, actual: 0 });
    expect(await store.readStream(written)).toEqual([]);
    // The stream row the refused call created is empty: the stream still counts as missing.
    await store.append(written, [event()], { expectedRevision: 'no_stream' });
  });

  it('gives every event of an appendMany call the same transaction, in input order', async () => {
    const type = `ManyTx_${randomUUID().slice(0, 8)}`;
    const results = await store.appendMany(
      Array.from({ length: 5 }, () => ({ streamId: `many-tx-${randomUUID()}`, events: [event(type)] })),
    );
    const transactions = new Set(results.map((result) => result.position.split('/')[0]));
    expect(transactions.size).toBe(1);
    const positions = results.map((result) => Number(result.position.split('/')[1]));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });

  it('counts the events readAll would return, by type', async () => {
    const type = `Counted_${randomUUID().slice(0, 8)}`;
    await store.append(`count-${randomUUID()}`, [event(type), event(type), event()]);
    await readAllUntil(store, { eventTypes: [type] }, 2);
    expect(await store.countAll({ eventTypes: [type] })).toBe(2);
    expect(await store.countAll()).toBeGreaterThanOrEqual(3);
  });

  it('moves a filtered reader past events it did not ask for', async () => {
    await store.append(`skip-${randomUUID()}`, [event()]);
    const all = await readAllUntil(store, {}, 1);
    const page = await store.readAll({ eventTypes: [`Absent_${randomUUID()}`] });
    expect(page.events).toEqual([]);
    expect(page.lastPosition).toBe(all.at(-1)?.position);
  });
});

describe('PostgreSQL event store across connections', () => {
  let testDb: TestDb;
  let store: PostgresEventStore;
  beforeAll(async () => {
    testDb = await createTestDb({ max: 40 });
    store = createPostgresEventStore(testDb.db);
  });
  afterAll(async () => {
    await store.close();
    await testDb.drop();
  });

  it('hides an event committed while an older transaction is open, then shows both in order', async () => {
    const type = `Late_${randomUUID().slice(0, 8)}`;
    let releaseOlder!: () => void;
    const olderMayCommit = new Promise<void>((resolve) => {
      releaseOlder = resolve;
    });
    let olderAppended!: () => void;
    const olderHasAppended = new Promise<void>((resolve) => {
      olderAppended = resolve;
    });
    const olderEvent = event(type, { who: 'older' });
    const older = testDb.db.transaction(async (tx) => {
      await store.appendInTransaction(tx, `older-${randomUUID()}`, [olderEvent]);
      olderAppended();
      await olderMayCommit;
    });
    await olderHasAppended;
    const newerEvent = event(type, { who: 'newer' });
    await store.append(`newer-${randomUUID()}`, [newerEvent]);

    // The newer event is committed, but a reader that took it now would pass the older one forever.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await store.readAll({ eventTypes: [type] })).events).toEqual([]);

    releaseOlder();
    await older;
    const events = await readAllUntil(store, { eventTypes: [type] }, 2);
    expect(events.map((recorded) => recorded.id)).toEqual([olderEvent.id, newerEvent.id]);
  });

  it('delivers every event exactly once to a live subscriber while transactions commit out of order', async () => {
    const received = new Map<string, number>();
    const delivered: RecordedEvent[] = [];
    const controller = new AbortController();
    // Start at the head: events of earlier tests in this schema are all readable by now.
    const head = (await store.readAll({ eventTypes: ['NothingOfThisType'] })).lastPosition;
    const subscription = store.subscribe({
      after: head,
      signal: controller.signal,
      limit: 50,
      handle: async (events) => {
        for (const recorded of events) {
          received.set(recorded.id, (received.get(recorded.id) ?? 0) + 1);
          delivered.push(recorded);
        }
      },
    });

    const appended: { id: string; committedAt: number }[] = [];
    const sharedStream = `shared-${randomUUID()}`;
    const appenders = Array.from({ length: 16 }, async (_, appender) => {
      for (let round = 0; round < 6; round++) {
        const events = [event('Raced', { appender, round }), event('Raced', { appender, round })];
        if (appender % 2 === 0) {
          // Appends early, then holds its transaction open while others commit.
          await testDb.db.transaction(async (tx) => {
            await store.appendInTransaction(tx, `held-${appender}-${round}`, events);
            await tx.query('select pg_sleep($1)', [Math.random() * 0.15]);
          });
        } else {
          await store.append(sharedStream, events);
        }
        const committedAt = performance.now();
        for (const recorded of events) appended.push({ id: recorded.id!, committedAt });
      }
    });
    await Promise.all(appenders);

    const deadline = Date.now() + 15_000;
    while (received.size < appended.length && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    controller.abort();
    await subscription.done;

    expect(received.size).toBe(appended.length);
    expect([...received.values()].every((count) => count === 1)).toBe(true);
    expect(new Set(appended.map((item) => item.id))).toEqual(new Set(received.keys()));

    // The race is real: some event with a lower global_position committed after one with a higher
    // one, which a reader ordered by global_position alone would have skipped.
    const committedAt = new Map(appended.map((item) => [item.id, item.committedAt]));
    const byGlobalPosition = [...delivered].sort((a, b) => globalPosition(a) - globalPosition(b));
    let lateCommits = 0;
    let latestCommit = 0;
    for (const recorded of byGlobalPosition) {
      const at = committedAt.get(recorded.id)!;
      if (at < latestCommit) lateCommits++;
      latestCommit = Math.max(latestCommit, at);
    }
    expect(lateCommits).toBeGreaterThan(0);

    // One stream's events reach "all" in revision order even under contention.
    const shared = delivered.filter((recorded) => recorded.streamId === sharedStream);
    expect(shared.map((recorded) => recorded.revision)).toEqual(shared.map((_, index) => index));
  });

  it('refuses to append a revision after a newer transaction appended to the stream', async () => {
    const stream = `order-${randomUUID()}`;
    await expect(
      testDb.db.transaction(async (tx) => {
        await tx.query('select pg_current_xact_id()');
        await store.append(stream, [event()]);
        await store.appendInTransaction(tx, stream, [event()]);
      }),
    ).rejects.toBeInstanceOf(StreamOrderConflictError);
    expect((await store.readStream(stream)).map((recorded) => recorded.revision)).toEqual([0]);
  });

  it('stores an id once when many streams append it at the same moment', async () => {
    const shared = event();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, index) => store.append(`dup-${index}-${randomUUID()}`, [shared])),
    );
    expect(results.filter((result) => !result.duplicate)).toHaveLength(1);
    const { rows } = await testDb.db.query<{ n: number }>(
      'select count(*) as n from events where event_id = $1',
      [shared.id],
    );
    expect(rows[0]?.n).toBe(1);
  });

  it('appendMany reports an id another call stored in another stream at the same moment as a duplicate', async () => {
    const shared = event();
    const calls = Array.from({ length: 10 }, (_, index) => [
      { streamId: `many-own-${index}-${randomUUID()}`, events: [event()] },
      { streamId: `many-dup-${index}-${randomUUID()}`, events: [shared] },
    ]);
    const results = await Promise.all(calls.map((call) => store.appendMany(call)));
    expect(results.every(([own]) => own?.duplicate === false)).toBe(true);
    expect(results.filter(([, dup]) => dup?.duplicate === false)).toHaveLength(1);
    expect(new Set(results.map(([, dup]) => dup?.position)).size).toBe(1);
    const { rows } = await testDb.db.query<{ n: number }>(
      'select count(*) as n from events where event_id = $1',
      [shared.id],
    );
    expect(rows[0]?.n).toBe(1);
  });

  it('settles appendMany calls that meet the same ids in opposite orders, each id stored once', async () => {
    const [x, y] = [event(), event()];
    const results = await Promise.all([
      store.appendMany([
        { streamId: `many-x1-${randomUUID()}`, events: [x] },
        { streamId: `many-y1-${randomUUID()}`, events: [y] },
      ]),
      store.appendMany([
        { streamId: `many-y2-${randomUUID()}`, events: [y] },
        { streamId: `many-x2-${randomUUID()}`, events: [x] },
      ]),
    ]);
    expect(results.flat().filter((result) => !result.duplicate)).toHaveLength(2);
    const { rows } = await testDb.db.query<{ n: number }>(
      'select count(*) as n from events where event_id = any ($1::text[])',
      [[x.id, y.id]],
    );
    expect(rows[0]?.n).toBe(2);
  });

  it('retries an appendMany call that met a stream appended by a newer transaction, keeping revision order in "all"', async () => {
    const type = `ManyOrder_${randomUUID().slice(0, 8)}`;
    const blocked = `many-blocked-${randomUUID()}`;
    const raced = `many-raced-${randomUUID()}`;
    let release!: () => void;
    const mayCommit = new Promise<void>((resolve) => {
      release = resolve;
    });
    let held!: () => void;
    const isHeld = new Promise<void>((resolve) => {
      held = resolve;
    });
    // An older transaction holds the first stream of the call (streams are locked in id order).
    const blocker = testDb.db.transaction(async (tx) => {
      await store.appendInTransaction(tx, blocked, [event(type)]);
      held();
      await mayCommit;
    });
    await isHeld;
    const many = store.appendMany([
      { streamId: blocked, events: [event(type)] },
      { streamId: raced, events: [event(type)] },
    ]);
    await waitForLockWait(testDb.db, 'append_events_many');
    // A newer transaction appends to the second stream and commits while the call waits.
    const first = event(type);
    await store.append(raced, [first]);
    release();
    await blocker;
    const results = await many;
    expect(results.map((result) => result.nextRevision)).toEqual([1, 1]);
    const events = await readAllUntil(store, { eventTypes: [type] }, 4);
    const racedEvents = events.filter((recorded) => recorded.streamId === raced);
    expect(racedEvents.map((recorded) => recorded.revision)).toEqual([0, 1]);
    expect(racedEvents[0]?.id).toBe(first.id);
  });

  it('notifies listeners in any process after an appendMany', async () => {
    const other = openPostgres({ connectionString: TEST_DATABASE_URL, schema: testDb.schema, max: 2 });
    let resolveNotified!: () => void;
    const notified = new Promise<void>((resolve) => {
      resolveNotified = resolve;
    });
    const unlisten = await other.listen(EVENTS_CHANNEL, () => resolveNotified());
    try {
      await store.appendMany([{ streamId: `notify-many-${randomUUID()}`, events: [event()] }]);
      await expect(
        Promise.race([
          notified,
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no notification')), 5_000)),
        ]),
      ).resolves.toBeUndefined();
    } finally {
      await unlisten();
      await other.close();
    }
  });

  it('notifies listeners in any process on each append', async () => {
    const other = openPostgres({ connectionString: TEST_DATABASE_URL, schema: testDb.schema, max: 2 });
    let resolveNotified!: () => void;
    const notified = new Promise<void>((resolve) => {
      resolveNotified = resolve;
    });
    const unlisten = await other.listen(EVENTS_CHANNEL, () => resolveNotified());
    try {
      await store.append(`notify-${randomUUID()}`, [event()]);
      await expect(
        Promise.race([
          notified,
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no notification')), 5_000)),
        ]),
      ).resolves.toBeUndefined();
    } finally {
      await unlisten();
      await other.close();
    }
  });
});

function globalPosition(recorded: RecordedEvent): number {
  return Number(recorded.position.split('/')[1]);
}

describe('PostgreSQL event store on an analyzed store', () => {
  it('reads about the page from the indexes on an analyzed store, not the whole store for a type without events', async () => {
    // docs/event-store.md, "Reading": planned once for all the types, the page had PostgreSQL walk
    // the primary key from START filtered by type, to the end of the store for the type without
    // events; planned per type, the indexes give about the page's events.
    const own = await createTestDb({ max: 1 });
    const ownStore = createPostgresEventStore(own.db);
    try {
      for (let batch = 0; batch < 10; batch++)
        await ownStore.appendMany(
          Array.from({ length: 50 }, () => ({
            streamId: `common-${randomUUID()}`,
            events: Array.from({ length: 10 }, () => event('Common')),
          })),
        );
      // A transaction open elsewhere in the cluster holds the events back until it ends.
      let stored = await ownStore.readAll({ limit: 5000 });
      for (const end = Date.now() + 30_000; stored.events.length < 5000 && Date.now() < end; ) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        stored = await ownStore.readAll({ limit: 5000 });
      }
      await own.db.query('analyze events');
      const indexReads = async () => {
        await own.db.query('select pg_stat_force_next_flush()');
        const { rows } = await own.db.query<{ n: string }>(
          `select sum(idx_tup_read)::text as n from pg_stat_user_indexes
            where schemaname = current_schema() and relname = 'events'`,
        );
        return Number(rows[0]?.n ?? 0);
      };
      const before = await indexReads();
      const page = await ownStore.readAll({ eventTypes: ['Common', 'Missing'], limit: 1000 });
      expect(page.events).toHaveLength(1000);
      // 5,000 events stored: a walk to the end of the store reads them all.
      expect((await indexReads()) - before).toBeLessThan(1500);
      // The head of those types: one step back in each type's range.
      const headBefore = await indexReads();
      expect(await ownStore.headPosition!({ eventTypes: ['Common', 'Missing'] })).toBe(stored.lastPosition);
      expect((await indexReads()) - headBefore).toBeLessThan(100);

      // A caught-up subscriber's read is prepared (docs/event-store.md, "Reading"). Under the
      // generic plan PostgreSQL may keep for it, a poll from near the end reads about what follows
      // (the pool's one connection holds the setting).
      await own.db.query('set plan_cache_mode = force_generic_plan');
      const poll = ownStore.readAll as (options: ReadAllOptions, walk: boolean) => Promise<ReadAllPage>;
      const after = stored.events[4989]!.position;
      for (const eventTypes of [['Common', 'Missing'], undefined]) {
        const prepared = await indexReads();
        const polled = await poll({ after, ...(eventTypes && { eventTypes }), limit: 1000 }, false);
        expect(polled.events.map((e) => e.id)).toEqual(stored.events.slice(4990).map((e) => e.id));
        expect((await indexReads()) - prepared).toBeLessThan(100);
      }
    } finally {
      await ownStore.close();
      await own.drop();
    }
  });
});

/** Waits until a session of this database waits on a lock while running a statement naming `fragment`. */
async function waitForLockWait(db: Db, fragment: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.query<{ n: number }>(
      `select count(*) as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and query like '%' || $1 || '%'
          and pid <> pg_backend_pid()`,
      [fragment],
    );
    if ((rows[0]?.n ?? 0) > 0) return;
    if (Date.now() > deadline) throw new Error(`no session waited on a lock in ${fragment}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
