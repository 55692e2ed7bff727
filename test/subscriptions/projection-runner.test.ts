import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, Queryable } from '../../src/db/db.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import type { EventStore, NewEvent, RecordedEvent } from '../../src/eventstore/port.ts';
import { START } from '../../src/eventstore/port.ts';
import { createPostgresEventStore, type PostgresEventStore } from '../../src/eventstore/postgres.ts';
import {
  applyBatch,
  catchUpProjection,
  type Projection,
  readCheckpoint,
  rebuildProjection,
  runProjection,
} from '../../src/subscriptions/projection-runner.ts';
import { createDb, createTestDb, ENGINES, TEST_DATABASE_URL, type TestDb } from '../support/db.ts';

/** Counts how often each event was applied: any count above 1 is a double application. */
/** Counts applications per event; `slowMs` makes each batch take longer (a busy applier). */
function countingProjection(name: string, type: string, applier = 'main', slowMs = 0): Projection {
  const table = `${name}_applications`;
  return {
    name,
    eventTypes: [type],
    async apply(tx, events) {
      if (slowMs > 0) await tx.query('select pg_sleep($1)', [slowMs / 1000]);
      await tx.query(
        `insert into ${table} (event_id, applications, applier)
         select id, 1, $2 from unnest($1::text[]) as t(id)
         on conflict (event_id) do update set applications = ${table}.applications + 1`,
        [events.map((event) => event.id), applier],
      );
    },
    async reset(tx) {
      await tx.query(`delete from ${table}`);
    },
  };
}

async function createCountingTable(db: Queryable, name: string): Promise<void> {
  await db.exec(
    `create table ${name}_applications (event_id text primary key, applications integer not null, applier text not null)`,
  );
}

async function applications(db: Queryable, name: string) {
  const { rows } = await db.query<{ event_id: string; applications: number; applier: string }>(
    `select event_id, applications, applier from ${name}_applications order by event_id`,
  );
  return rows;
}

/** A small read model: the latest name of each thing and how many times it was renamed. */
function thingNamesProjection(name: string): Projection {
  return {
    name,
    eventTypes: ['ThingNamed'],
    async apply(tx, events) {
      for (const event of events) {
        const data = event.data as { thingId: string; name: string };
        await tx.query(
          `insert into ${name} (thing_id, name, renames, last_revision) values ($1, $2, 0, $3)
           on conflict (thing_id) do update
             set name = excluded.name, renames = ${name}.renames + 1, last_revision = excluded.last_revision`,
          [data.thingId, data.name, event.revision],
        );
      }
    },
    async reset(tx) {
      await tx.query(`delete from ${name}`);
    },
  };
}

const named = (thingId: string, name: string): NewEvent => ({
  id: randomUUID(),
  type: 'ThingNamed',
  data: { thingId, name },
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function appendCounted(store: PostgresEventStore, type: string, count: number, perAppend = 10) {
  for (let i = 0; i < count; i += perAppend) {
    const events = Array.from({ length: Math.min(perAppend, count - i) }, () => ({
      id: randomUUID(),
      type,
      data: {},
    }));
    await store.append(`counted-${randomUUID()}`, events);
  }
}

describe.each(ENGINES)('projection runner on %s', (engine) => {
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

  it('commits a batch and its checkpoint together: a failing apply leaves both unchanged', async () => {
    const name = `failing_${engine}`;
    await createCountingTable(db, name);
    const counting = countingProjection(name, 'Poisonable');
    const poison = { id: randomUUID(), type: 'Poisonable', data: { poison: true } };
    await store.append(`p-${randomUUID()}`, [{ id: randomUUID(), type: 'Poisonable', data: {} }]);
    await store.append(`p-${randomUUID()}`, [poison]);
    const projection: Projection = {
      ...counting,
      async apply(tx, events) {
        await counting.apply(tx, events);
        if (events.some((event) => event.id === poison.id)) throw new Error('cannot apply poison');
      },
    };

    const controller = new AbortController();
    const errors: unknown[] = [];
    const running = runProjection(db, store, projection, {
      signal: controller.signal,
      batchSize: 1,
      retryDelayMs: 10,
      onError: (error) => {
        errors.push(error);
        if (errors.length >= 2) controller.abort();
      },
    });
    await running;

    expect(errors.map((error) => (error as Error).message)).toEqual([
      'cannot apply poison',
      'cannot apply poison',
    ]);
    const rows = await applications(db, name);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.event_id).not.toBe(poison.id);
    const [first] = (await store.readAll({ eventTypes: ['Poisonable'] })).events;
    expect(await readCheckpoint(db, name)).toBe(first?.position);
  });

  it('leaves the checkpoint alone and applies nothing when it moved since it was read', async () => {
    const name = `moved_${engine}`;
    await createCountingTable(db, name);
    const projection = countingProjection(name, 'Moved');
    await store.append(`m-${randomUUID()}`, [{ id: randomUUID(), type: 'Moved', data: {} }]);
    const page = await store.readAll({ eventTypes: ['Moved'] });
    expect(await applyBatch(db, projection, START, page.lastPosition, page.events)).toBe(false);
    await catchUpProjection(db, store, projection);
    expect(await applyBatch(db, projection, START, page.lastPosition, page.events)).toBe(false);
    expect((await applications(db, name)).map((row) => row.applications)).toEqual([1]);
    expect(await readCheckpoint(db, name)).toBe(page.lastPosition);
  });

  it('with batchDelayMs, takes events arriving one by one in fewer batches, and applies each once', async () => {
    const name = `gathered_${engine}`;
    await createCountingTable(db, name);
    const batches: number[] = [];
    const counting = countingProjection(name, `Gathered_${engine}`);
    const projection: Projection = {
      ...counting,
      batchDelayMs: 300,
      apply: async (tx, events) => {
        batches.push(events.length);
        await counting.apply(tx, events);
      },
    };
    const controller = new AbortController();
    const running = runProjection(db, store, projection, { signal: controller.signal });
    await appendCounted(store, `Gathered_${engine}`, 1, 1);
    await waitFor(async () => (await applications(db, name)).length === 1);
    // 20 events, one every 25 ms: without the delay they would come in about 20 batches.
    const started = Date.now();
    for (let i = 0; i < 20; i++) {
      await appendCounted(store, `Gathered_${engine}`, 1, 1);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await waitFor(async () => (await applications(db, name)).length === 21);
    const elapsed = Date.now() - started;
    controller.abort();
    await running;
    expect((await applications(db, name)).every((row) => row.applications === 1)).toBe(true);
    expect(batches[0]).toBe(1);
    // At most one batch per 300 ms (plus the ones at either end), and far fewer than events.
    expect(batches.length - 1).toBeLessThanOrEqual(Math.ceil(elapsed / 300) + 1);
    expect(batches.length - 1).toBeLessThan(20);
  });

  it('with batchDelayMs, reads a backlog without pausing, and stops at once mid-pause losing nothing', async () => {
    const name = `paused_${engine}`;
    const type = `Paused_${engine}`;
    await createCountingTable(db, name);
    const projection: Projection = { ...countingProjection(name, type), batchDelayMs: 60_000 };
    await appendCounted(store, type, 25, 25);
    const controller = new AbortController();
    const running = runProjection(db, store, projection, { signal: controller.signal, batchSize: 10 });
    // Two full batches and the short one, then the pause: a minute, were full batches paused too.
    await waitFor(async () => (await applications(db, name)).length === 25, 10_000);
    await appendCounted(store, type, 3, 3);
    const stopping = Date.now();
    controller.abort();
    await running;
    expect(Date.now() - stopping).toBeLessThan(5_000);
    expect(await applications(db, name)).toHaveLength(25);
    // The next process takes what arrived during the pause, once.
    const next = new AbortController();
    const resumed = runProjection(db, store, projection, { signal: next.signal });
    await waitFor(async () => (await applications(db, name)).length === 28, 10_000);
    next.abort();
    await resumed;
    expect((await applications(db, name)).every((row) => row.applications === 1)).toBe(true);
  });

  it('keeps a live read model up to date and rebuilds it equal, reporting progress', async () => {
    const name = `thing_names_${engine}`;
    await db.exec(
      `create table ${name} (thing_id text primary key, name text not null, renames integer not null, last_revision integer not null)`,
    );
    const projection = thingNamesProjection(name);
    const things = Array.from({ length: 12 }, (_, i) => `thing-${i}`);
    let appended = 0;
    for (let round = 0; round < 5; round++) {
      for (const thing of things) {
        await store.append(`${name}-${thing}`, [named(thing, `${thing} v${round}`)]);
        appended++;
      }
      // Unrelated events the projection must pass over.
      await store.append(`noise-${randomUUID()}`, [{ id: randomUUID(), type: 'Noise', data: {} }]);
    }

    const controller = new AbortController();
    const running = runProjection(db, store, projection, { signal: controller.signal, batchSize: 7 });
    const snapshot = async () =>
      (await db.query(`select thing_id, name, renames, last_revision from ${name} order by thing_id`)).rows;
    await waitFor(
      async () => (await snapshot()).every((row) => row.renames === 4) && (await snapshot()).length === 12,
    );
    // One more while live.
    await store.append(`${name}-thing-0`, [named('thing-0', 'thing-0 final')]);
    appended++;
    await waitFor(async () => (await snapshot()).some((row) => row.name === 'thing-0 final'));
    controller.abort();
    await running;
    const live = await snapshot();

    const progress: [number, number][] = [];
    const applied = await rebuildProjection(db, store, projection, {
      batchSize: 10,
      onProgress: (done, total) => progress.push([done, total]),
    });
    expect(applied).toBe(appended);
    expect(await snapshot()).toEqual(live);
    expect(progress[0]).toEqual([0, appended]);
    expect(progress.at(-1)).toEqual([appended, appended]);
    for (let i = 1; i < progress.length; i++)
      expect(progress[i]![0]).toBeGreaterThanOrEqual(progress[i - 1]![0]);
  });
});

describe('projection runner across processes (PostgreSQL)', () => {
  let testDb: TestDb;
  let store: PostgresEventStore;
  const pools: Db[] = [];
  const otherProcess = () => {
    const pool = openPostgres({ connectionString: TEST_DATABASE_URL, schema: testDb.schema, max: 4 });
    pools.push(pool);
    return pool;
  };
  beforeAll(async () => {
    testDb = await createTestDb({ max: 10 });
    store = createPostgresEventStore(testDb.db);
  });
  afterAll(async () => {
    await store.close();
    await Promise.all(pools.map((pool) => pool.close()));
    await testDb.drop();
  });

  it('catches up to every event committed before the call, even while an older transaction holds them back', async () => {
    const name = 'held_back';
    await createCountingTable(testDb.db, name);
    const projection = countingProjection(name, 'HeldBack');
    // Another process opens a write transaction first (it takes the lower transaction id) and keeps it open.
    const other = otherProcess();
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const open = other.transaction(async (tx) => {
      await tx.query('select pg_current_xact_id()');
      await held;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await store.append(`held-${randomUUID()}`, [{ id: randomUUID(), type: 'HeldBack', data: {} }]);
    expect((await store.readAll({ eventTypes: ['HeldBack'] })).events).toHaveLength(0);

    let caughtUp = false;
    const catchingUp = catchUpProjection(testDb.db, store, projection).then((applied) => {
      caughtUp = true;
      return applied;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(caughtUp).toBe(false);
    release();
    await open;
    expect(await catchingUp).toBe(1);
    expect((await applications(testDb.db, name)).map((row) => row.applications)).toEqual([1]);
  });

  it('never lets two appliers apply the same event, even without the lock', async () => {
    const name = 'contended';
    await createCountingTable(testDb.db, name);
    await appendCounted(store, 'Contended', 600, 7);
    const appenders = appendCounted(store, 'Contended', 400, 3);
    const appliers = ['a', 'b', 'c'].map(async (applier) => {
      const pool = otherProcess();
      const projection = countingProjection(name, 'Contended', applier);
      let applied = 0;
      for (let round = 0; round < 40; round++) {
        applied += await catchUpProjection(pool, store, projection, { batchSize: 5 });
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return applied;
    });
    await appenders;
    const applied = await Promise.all(appliers);
    const last = await catchUpProjection(testDb.db, store, countingProjection(name, 'Contended', 'final'));

    const rows = await applications(testDb.db, name);
    expect(rows).toHaveLength(1000);
    expect(rows.filter((row) => row.applications !== 1)).toEqual([]);
    // Each applier's own count of what it applied adds up to the events, none counted twice.
    expect(applied.reduce((sum, n) => sum + n, last)).toBe(1000);
  });

  it('runs one active runner per projection; a standby takes over from the checkpoint when it stops', async () => {
    const name = 'failover';
    await createCountingTable(testDb.db, name);
    await appendCounted(store, 'Failover', 300);

    const controllers = [new AbortController(), new AbortController()];
    const runners = controllers.map((controller, index) =>
      runProjection(otherProcess(), store, countingProjection(name, 'Failover', `runner-${index}`), {
        signal: controller.signal,
        batchSize: 20,
        lockRetryMs: 50,
      }),
    );
    await waitFor(async () => (await applications(testDb.db, name)).length === 300);
    const appliers = new Set((await applications(testDb.db, name)).map((row) => row.applier));
    expect(appliers.size).toBe(1);
    const active = appliers.has('runner-0') ? 0 : 1;

    controllers[active]!.abort();
    await runners[active];
    await appendCounted(store, 'Failover', 200);
    await waitFor(async () => (await applications(testDb.db, name)).length === 500);
    controllers[1 - active]!.abort();
    await Promise.all(runners);

    const rows = await applications(testDb.db, name);
    expect(rows.filter((row) => row.applications !== 1)).toEqual([]);
    expect(rows.filter((row) => row.applier === `runner-${1 - active}`)).toHaveLength(200);
  });

  it('lets a live runner in another process continue after a rebuild, applying each event once', async () => {
    const name = 'rebuilt_live';
    await createCountingTable(testDb.db, name);
    await appendCounted(store, 'RebuiltLive', 500);
    // Each batch the live runner reads waits for the gate before it is applied (no lock held yet).
    let gate = Promise.resolve();
    const gatedStore: EventStore = {
      ...store,
      subscribe: (options) =>
        store.subscribe({
          ...options,
          handle: async (events, lastPosition, more) => {
            await gate;
            return options.handle(events, lastPosition, more);
          },
        }),
    };
    const controller = new AbortController();
    const live = countingProjection(name, 'RebuiltLive', 'live');
    const runner = runProjection(otherProcess(), gatedStore, live, {
      signal: controller.signal,
      batchSize: 25,
    });
    await waitFor(async () => (await applications(testDb.db, name)).length === 500);
    // From now on the live runner is busy (slow batches), and it holds its next batch until the
    // rebuild has applied one, so the rebuild surely takes part in the race for batches (left to
    // itself the live runner, a step ahead after each commit, can win every one).
    live.apply = countingProjection(name, 'RebuiltLive', 'live', 50).apply;
    let open!: () => void;
    gate = new Promise((resolve) => {
      open = resolve;
    });

    const appending = appendCounted(store, 'RebuiltLive', 300, 5);
    const rebuilt = await rebuildProjection(
      testDb.db,
      store,
      countingProjection(name, 'RebuiltLive', 'rebuild'),
      {
        batchSize: 25,
        onProgress: (done) => {
          if (done > 0) open();
        },
      },
    );
    open();
    await appending;
    await waitFor(async () => (await applications(testDb.db, name)).length === 800);
    controller.abort();
    await runner;

    const rows = await applications(testDb.db, name);
    expect(rows.filter((row) => row.applications !== 1)).toEqual([]);
    expect(rows.filter((row) => row.applier === 'rebuild')).toHaveLength(rebuilt);
    expect(rebuilt).toBeGreaterThan(0);
    const events: RecordedEvent[] = (await store.readAll({ eventTypes: ['RebuiltLive'], limit: 10_000 }))
      .events;
    expect(await readCheckpoint(testDb.db, name)).toBe(events.at(-1)?.position);
  });
});
