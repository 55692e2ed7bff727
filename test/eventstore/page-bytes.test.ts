import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/db.ts';
import type { EventStore, NewEvent, ReadAllOptions, RecordedEvent } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { createDb, ENGINES } from '../support/db.ts';

// docs/event-store.md, "Pages by size"
describe.each(ENGINES)('pages of "all" by size on %s', (engine) => {
  let db: Db;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ db, drop } = await createDb(engine));
  });
  afterAll(() => drop());

  /** `count` events of `type` with about `bytes` bytes of data each, in one stream of their own. */
  const appendSized = async (store: EventStore, type: string, count: number, bytes: number) => {
    const events: NewEvent[] = Array.from({ length: count }, (_, n) => ({
      id: randomUUID(),
      type,
      data: { n, text: 'x'.repeat(bytes) },
    }));
    await store.append(`sized-${randomUUID()}`, events);
    return events.map((event) => event.id!);
  };
  const sizesOf = async (ids: readonly string[]) => {
    const { rows } = await db.query<{ event_id: string; data_bytes: number; text_bytes: number }>(
      `select event_id, data_bytes, octet_length(data::text) + octet_length(metadata::text) as text_bytes
         from events where event_id = any($1)`,
      [ids],
    );
    return new Map(rows.map((row) => [row.event_id, row]));
  };
  /** Every page from `after` until a page comes back empty. */
  const pages = async (store: EventStore, options: Omit<ReadAllOptions, 'after'>, after: string) => {
    const read: { events: RecordedEvent[]; cut: boolean }[] = [];
    for (;;) {
      const page = await store.readAll({ ...options, after });
      if (page.events.length === 0) return read;
      read.push({ events: page.events, cut: page.cut === true });
      expect(page.lastPosition).toBe(page.events.at(-1)!.position);
      after = page.lastPosition;
    }
  };

  it('stores each event with its size as appended', async () => {
    const store = createPostgresEventStore(db);
    const ids = await appendSized(store, 'Measured', 3, 5_000);
    const sizes = await sizesOf(ids);
    for (const id of ids) {
      const { data_bytes, text_bytes } = sizes.get(id)!;
      expect(data_bytes).toBe(text_bytes);
      expect(data_bytes).toBeGreaterThan(5_000);
    }
  });

  it('stops a page once its events reach the budget, and the next page goes on from there', async () => {
    const { lastPosition: after } = await createPostgresEventStore(db).readAll({ limit: 100_000 });
    // each event is about 1,050 bytes: three and a half events' worth
    const store = createPostgresEventStore(db, { pageBytes: 3_700 });
    const ids = await appendSized(store, 'Sized', 10, 1_000);
    const read = await pages(store, { limit: 100 }, after);
    expect(read.map((page) => page.events.length)).toEqual([4, 4, 2]);
    expect(read.map((page) => page.cut)).toEqual([true, true, false]);
    expect(read.flatMap((page) => page.events.map((event) => event.id))).toEqual(ids);
  });

  it('reads an event larger than the budget alone', async () => {
    const { lastPosition: after } = await createPostgresEventStore(db).readAll({ limit: 100_000 });
    const store = createPostgresEventStore(db, { pageBytes: 1_000 });
    const ids = await appendSized(store, 'Large', 3, 4_000);
    const read = await pages(store, { limit: 100 }, after);
    expect(read.map((page) => page.events.map((event) => event.id))).toEqual(ids.map((id) => [id]));
  });

  it('keeps a filtered page that stops at the budget from passing the events after it', async () => {
    const { lastPosition: after } = await createPostgresEventStore(db).readAll({ limit: 100_000 });
    const store = createPostgresEventStore(db, { pageBytes: 3_700 });
    const wanted = await appendSized(store, 'Wanted', 6, 1_000);
    await appendSized(store, 'Unwanted', 3, 10);
    const later = await appendSized(store, 'Wanted', 3, 1_000);
    const read = await pages(store, { limit: 100, eventTypes: ['Wanted'] }, after);
    expect(read.flatMap((page) => page.events.map((event) => event.id))).toEqual([...wanted, ...later]);
    expect(read.map((page) => page.events.length)).toEqual([4, 4, 1]);
  });

  it('counts the stored size of an event appended before sizes were kept', async () => {
    const { lastPosition: after } = await createPostgresEventStore(db).readAll({ limit: 100_000 });
    const store = createPostgresEventStore(db, { pageBytes: 2_000 });
    // a row under 2 kB is stored uncompressed: its stored size is about its own
    const events: NewEvent[] = Array.from({ length: 4 }, () => ({
      id: randomUUID(),
      type: 'Old',
      data: { text: randomUUID().repeat(30) },
    }));
    await store.append(`old-${randomUUID()}`, events);
    await db.query('update events set data_bytes = null where event_id = any($1)', [events.map((e) => e.id)]);
    const read = await pages(store, { limit: 100 }, after);
    expect(read.flatMap((page) => page.events.map((event) => event.id))).toEqual(events.map((e) => e.id));
    expect(read.map((page) => page.events.length)).toEqual([2, 2]);
  });

  it('lets a subscription read a backlog of pages cut by size at once, not at the poll interval', async () => {
    const { lastPosition: after } = await createPostgresEventStore(db).readAll({ limit: 100_000 });
    const store = createPostgresEventStore(db, { pageBytes: 3_700, pollIntervalMs: 60_000 });
    const ids = await appendSized(store, 'Backlog', 10, 1_000);
    const controller = new AbortController();
    const batches: { ids: string[]; more: boolean }[] = [];
    const handled = new Promise<void>((resolve) => {
      const subscription = store.subscribe({
        after,
        eventTypes: ['Backlog'],
        limit: 100,
        signal: controller.signal,
        handle: async (events, _lastPosition, more) => {
          batches.push({ ids: events.map((event) => event.id), more });
          if (batches.flatMap((batch) => batch.ids).length === ids.length) resolve();
        },
      });
      void subscription.done.catch(() => {});
    });
    await handled;
    controller.abort();
    await store.close();
    expect(batches.flatMap((batch) => batch.ids)).toEqual(ids);
    expect(batches.map((batch) => batch.more)).toEqual([true, true, false]);
  });
});
