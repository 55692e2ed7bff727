import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, WrongExpectedRevisionError } from '../../src/errors.ts';
import type { EventStore, NewEvent, ReadAllOptions, RecordedEvent } from '../../src/eventstore/port.ts';
import { START } from '../../src/eventstore/port.ts';

export interface ContractStore {
  store: EventStore;
  cleanup(): Promise<void>;
}

/**
 * The behaviour every EventStore adapter must have. Adapter-neutral: tests use their own stream
 * ids and event types, so one store may be shared with other tests, and they only read "all"
 * through the port (readAll may show a committed event a little later, so reads poll).
 */
export function describeEventStoreContract(name: string, makeStore: () => Promise<ContractStore>): void {
  describe(`EventStore contract: ${name}`, () => {
    let made: ContractStore;
    let store: EventStore;
    beforeAll(async () => {
      made = await makeStore();
      store = made.store;
    });
    afterAll(async () => {
      await made?.cleanup();
    });

    describe('append and readStream', () => {
      it('appends events to a new stream and reads them back in revision order', async () => {
        const stream = streamId();
        const result = await store.append(
          stream,
          [
            { id: randomUUID(), type: 'ThingCreated', data: { n: 1, nested: { list: [1, 'two'] } } },
            { id: randomUUID(), type: 'ThingRenamed', data: { n: 2 } },
          ],
          { expectedRevision: 'no_stream' },
        );
        expect(result.nextRevision).toBe(1);
        expect(result.duplicate).toBe(false);
        expect(typeof result.position).toBe('string');

        const events = await store.readStream(stream);
        expect(events.map((event) => [event.revision, event.type, event.data])).toEqual([
          [0, 'ThingCreated', { n: 1, nested: { list: [1, 'two'] } }],
          [1, 'ThingRenamed', { n: 2 }],
        ]);
        for (const event of events) {
          expect(event.streamId).toBe(stream);
          expect(event.recordedAt).toBeInstanceOf(Date);
          expect(typeof event.position).toBe('string');
        }
        expect(events[1]?.position).toBe(result.position);
      });

      it('keeps the given event ids and generates one when an event has none', async () => {
        const stream = streamId();
        const id = randomUUID();
        await store.append(stream, [
          { id, type: 'ThingCreated', data: {} },
          { type: 'ThingRenamed', data: {} },
        ]);
        const [first, second] = await store.readStream(stream);
        expect(first?.id).toBe(id);
        expect(second?.id).toEqual(expect.any(String));
        expect(second?.id).not.toBe(id);
      });

      it('reads a stream from a revision, with a limit', async () => {
        const stream = streamId();
        await store.append(stream, numbered(5));
        const events = await store.readStream(stream, { fromRevision: 2, limit: 2 });
        expect(events.map((event) => event.revision)).toEqual([2, 3]);
        expect(events.map((event) => event.data)).toEqual([{ n: 2 }, { n: 3 }]);
      });

      it('reads a stream that does not exist as empty', async () => {
        expect(await store.readStream(streamId())).toEqual([]);
      });

      it('continues revisions across appends', async () => {
        const stream = streamId();
        await store.append(stream, numbered(2));
        const result = await store.append(stream, numbered(3, 2));
        expect(result.nextRevision).toBe(4);
        expect((await store.readStream(stream)).map((event) => event.revision)).toEqual([0, 1, 2, 3, 4]);
      });
    });

    describe('expected revision', () => {
      it('appends with any whatever the stream holds', async () => {
        const stream = streamId();
        expect((await store.append(stream, numbered(1), { expectedRevision: 'any' })).nextRevision).toBe(0);
        expect((await store.append(stream, numbered(1, 1), { expectedRevision: 'any' })).nextRevision).toBe(
          1,
        );
      });

      it('rejects no_stream when the stream exists, writing nothing', async () => {
        const stream = streamId();
        await store.append(stream, numbered(2));
        const error = await store
          .append(stream, numbered(1, 2), { expectedRevision: 'no_stream' })
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(WrongExpectedRevisionError);
        expect(error).toBeInstanceOf(ConflictError);
        expect(error).toMatchObject({ streamId: stream, actual: 1, errorCode: 'concurrent_modification' });
        expect(await store.readStream(stream)).toHaveLength(2);
      });

      it('rejects stream_exists when the stream does not exist', async () => {
        const stream = streamId();
        const error = await store
          .append(stream, numbered(1), { expectedRevision: 'stream_exists' })
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(WrongExpectedRevisionError);
        expect(error).toMatchObject({ streamId: stream, actual: -1 });
        expect(await store.readStream(stream)).toEqual([]);
      });

      it('accepts stream_exists when the stream has events', async () => {
        const stream = streamId();
        await store.append(stream, numbered(1));
        const result = await store.append(stream, numbered(1, 1), { expectedRevision: 'stream_exists' });
        expect(result.nextRevision).toBe(1);
      });

      it('accepts the exact current revision and rejects any other', async () => {
        const stream = streamId();
        await store.append(stream, numbered(3));
        expect((await store.append(stream, numbered(1, 3), { expectedRevision: 2 })).nextRevision).toBe(3);
        const stale = await store
          .append(stream, numbered(1, 4), { expectedRevision: 2 })
          .catch((caught: unknown) => caught);
        expect(stale).toBeInstanceOf(WrongExpectedRevisionError);
        expect(stale).toMatchObject({ streamId: stream, expected: 2, actual: 3 });
        const ahead = await store
          .append(stream, numbered(1, 4), { expectedRevision: 7 })
          .catch((caught: unknown) => caught);
        expect(ahead).toMatchObject({ expected: 7, actual: 3 });
        expect(await store.readStream(stream)).toHaveLength(4);
      });

      it('treats an exact revision on a missing stream as a conflict', async () => {
        const error = await store
          .append(streamId(), numbered(1), { expectedRevision: 0 })
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(WrongExpectedRevisionError);
        expect(error).toMatchObject({ actual: -1 });
      });

      it('lets exactly one of many concurrent writers with the same expected revision win', async () => {
        const stream = streamId();
        await store.append(stream, numbered(1));
        const outcomes = await Promise.allSettled(
          Array.from({ length: 8 }, (_, writer) =>
            store.append(stream, [{ id: randomUUID(), type: 'ThingCounted', data: { writer } }], {
              expectedRevision: 0,
            }),
          ),
        );
        const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
        const lost = outcomes.filter((outcome) => outcome.status === 'rejected');
        expect(won).toHaveLength(1);
        for (const outcome of lost) expect(outcome.reason).toBeInstanceOf(WrongExpectedRevisionError);
        expect(await store.readStream(stream)).toHaveLength(2);
      });
    });

    describe('idempotent append', () => {
      it('makes a repeated append of the same event ids a no-op that reports the stored position', async () => {
        const stream = streamId();
        const events = numbered(3);
        const first = await store.append(stream, events, { expectedRevision: 'no_stream' });
        const again = await store.append(stream, events, { expectedRevision: 'no_stream' });
        expect(again).toEqual({
          nextRevision: first.nextRevision,
          position: first.position,
          duplicate: true,
        });
        expect(await store.readStream(stream)).toHaveLength(3);
      });

      it('treats a retry with a now-stale exact revision as a duplicate, not a conflict', async () => {
        const stream = streamId();
        await store.append(stream, numbered(2));
        const events = numbered(1, 2);
        const first = await store.append(stream, events, { expectedRevision: 1 });
        const retried = await store.append(stream, events, { expectedRevision: 1 });
        expect(retried.duplicate).toBe(true);
        expect(retried.nextRevision).toBe(first.nextRevision);
        expect(await store.readStream(stream)).toHaveLength(3);
      });

      it('stores an event once when the same append runs many times at the same moment', async () => {
        const stream = streamId();
        const events = numbered(2);
        const results = await Promise.all(Array.from({ length: 10 }, () => store.append(stream, events)));
        expect(results.filter((result) => !result.duplicate)).toHaveLength(1);
        expect(new Set(results.map((result) => result.position)).size).toBe(1);
        expect(new Set(results.map((result) => result.nextRevision))).toEqual(new Set([1]));
        const stored = await store.readStream(stream);
        expect(stored.map((event) => event.id)).toEqual(events.map((event) => event.id));
      });
    });

    describe('appendMany', () => {
      it('appends to many new streams in one call and reports each result in input order', async () => {
        const streams = Array.from({ length: 25 }, () => streamId());
        const appends = streams.map((stream, i) => ({
          streamId: stream,
          events: numbered(1 + (i % 3)),
          options: { expectedRevision: i % 2 === 0 ? ('no_stream' as const) : ('any' as const) },
        }));
        const results = await store.appendMany(appends);
        expect(results.map((result) => result.nextRevision)).toEqual(appends.map((a) => a.events.length - 1));
        expect(results.every((result) => !result.duplicate)).toBe(true);
        for (const [i, append] of appends.entries()) {
          const stored = await store.readStream(append.streamId);
          expect(stored.map((event) => event.id)).toEqual(append.events.map((event) => event.id));
          expect(stored.map((event) => event.revision)).toEqual(append.events.map((_, n) => n));
          expect(stored.at(-1)?.position).toBe(results[i]?.position);
        }
      });

      it('applies several appends to one stream in input order, each checked after the ones before it', async () => {
        const stream = streamId();
        await store.append(stream, numbered(1));
        const [first, second, third] = [numbered(2, 1), numbered(1, 3), numbered(1, 4)];
        const results = await store.appendMany([
          { streamId: stream, events: first, options: { expectedRevision: 0 } },
          { streamId: streamId(), events: numbered(1), options: { expectedRevision: 'no_stream' } },
          { streamId: stream, events: second, options: { expectedRevision: 2 } },
          { streamId: stream, events: third, options: { expectedRevision: 'stream_exists' } },
        ]);
        expect(results.map((result) => result.nextRevision)).toEqual([2, 0, 3, 4]);
        const stored = await store.readStream(stream);
        expect(stored.map((event) => event.data)).toEqual([0, 1, 2, 3, 4].map((n) => ({ n })));
      });

      it('lets a later append of the call find the stream an earlier one created', async () => {
        const stream = streamId();
        const results = await store.appendMany([
          { streamId: stream, events: numbered(1), options: { expectedRevision: 'no_stream' } },
          { streamId: stream, events: numbered(1, 1), options: { expectedRevision: 'stream_exists' } },
        ]);
        expect(results.map((result) => result.nextRevision)).toEqual([0, 1]);
      });

      it('reports appends whose ids are all stored as duplicates with the stored position, and writes the rest', async () => {
        const known = streamId();
        const storedEvents = numbered(2);
        const before = await store.append(known, storedEvents);
        const fresh = streamId();
        const freshEvents = numbered(1);
        const results = await store.appendMany([
          { streamId: known, events: storedEvents, options: { expectedRevision: 'no_stream' } },
          { streamId: fresh, events: freshEvents },
        ]);
        expect(results[0]).toEqual({ ...before, duplicate: true });
        expect(results[1]).toMatchObject({ nextRevision: 0, duplicate: false });
        expect(await store.readStream(known)).toHaveLength(2);
        expect((await store.readStream(fresh)).map((event) => event.id)).toEqual([freshEvents[0]!.id]);
      });

      it('makes a repeated call a no-op that reports the same results as duplicates', async () => {
        const appends = [streamId(), streamId(), streamId()].map((stream) => ({
          streamId: stream,
          events: numbered(2),
        }));
        const first = await store.appendMany(appends);
        const again = await store.appendMany(appends);
        expect(again).toEqual(first.map((result) => ({ ...result, duplicate: true })));
      });

      it("copies each append's correlationId and causationId into its events unless they set their own", async () => {
        const [a, b] = [streamId(), streamId()];
        await store.appendMany([
          { streamId: a, events: numbered(1), options: { correlationId: 'c-a', causationId: 'cause-a' } },
          {
            streamId: b,
            events: [
              { id: randomUUID(), type: 'ThingCounted', data: {}, metadata: { correlationId: 'own' } },
            ],
            options: { correlationId: 'c-b' },
          },
        ]);
        expect((await store.readStream(a))[0]?.metadata).toEqual({
          correlationId: 'c-a',
          causationId: 'cause-a',
        });
        expect((await store.readStream(b))[0]?.metadata).toEqual({ correlationId: 'own' });
      });

      it('keeps the events of a call in input order in "all"', async () => {
        const type = uniqueType('ManyOrdered');
        const appends = Array.from({ length: 6 }, () => ({
          streamId: streamId(),
          events: numbered(2, 0, type),
        }));
        appends.push({ streamId: appends[0]!.streamId, events: numbered(1, 2, type) });
        await store.appendMany(appends);
        const events = await readAllUntil(store, { eventTypes: [type] }, 13);
        expect(events.map((event) => event.id)).toEqual(
          appends.flatMap((a) => a.events.map((event) => event.id)),
        );
      });

      it('rejects with the first refused append and writes nothing from it onwards', async () => {
        const existing = streamId();
        await store.append(existing, numbered(1));
        const [refusedLater, after] = [streamId(), streamId()];
        const error = await store
          .appendMany([
            { streamId: streamId(), events: numbered(1) },
            { streamId: existing, events: numbered(1, 1), options: { expectedRevision: 'no_stream' } },
            { streamId: refusedLater, events: numbered(1), options: { expectedRevision: 'stream_exists' } },
            { streamId: after, events: numbered(1) },
          ])
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(WrongExpectedRevisionError);
        expect(error).toMatchObject({ streamId: existing, expected: 'no_stream', actual: 0 });
        expect(await store.readStream(existing)).toHaveLength(1);
        expect(await store.readStream(refusedLater)).toEqual([]);
        expect(await store.readStream(after)).toEqual([]);
      });

      it('refuses an append of which only some ids are stored', async () => {
        const stream = streamId();
        const stored = numbered(1);
        await store.append(stream, stored);
        const error = await store
          .appendMany([{ streamId: stream, events: [...stored, ...numbered(1, 1)] }])
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(ConflictError);
        expect(error).toMatchObject({ errorCode: 'duplicate_event_id' });
        expect(await store.readStream(stream)).toHaveLength(1);
      });

      it('rejects a call that repeats an event id or holds an empty append, writing nothing', async () => {
        const [a, b] = [streamId(), streamId()];
        const shared = numbered(1);
        await expect(
          store.appendMany([
            { streamId: a, events: shared },
            { streamId: b, events: shared },
          ]),
        ).rejects.toMatchObject({ errorCode: 'duplicate_event_id' });
        await expect(
          store.appendMany([
            { streamId: a, events: numbered(1) },
            { streamId: b, events: [] },
          ]),
        ).rejects.toMatchObject({ errorCode: 'empty_append' });
        expect(await store.readStream(a)).toEqual([]);
        expect(await store.readStream(b)).toEqual([]);
      });

      it('returns no results for no appends', async () => {
        expect(await store.appendMany([])).toEqual([]);
      });

      it('stores each event once when overlapping calls run at the same moment', async () => {
        const appends = Array.from({ length: 30 }, () => ({ streamId: streamId(), events: numbered(1) }));
        // Each call takes a different window of the same appends, some in reverse order.
        const calls = Array.from({ length: 6 }, (_, call) => {
          const window = appends.slice(call * 4, call * 4 + 12);
          return call % 2 === 0 ? window : [...window].reverse();
        });
        const results = await Promise.all(calls.map((call) => store.appendMany(call)));
        const outcomes = new Map<string, { written: number; positions: Set<string> }>();
        calls.forEach((call, c) => {
          call.forEach((append, i) => {
            const result = results[c]![i]!;
            const outcome = outcomes.get(append.streamId) ?? { written: 0, positions: new Set() };
            if (!result.duplicate) outcome.written++;
            outcome.positions.add(result.position);
            expect(result.nextRevision).toBe(0);
            outcomes.set(append.streamId, outcome);
          });
        });
        for (const outcome of outcomes.values()) {
          expect(outcome.written).toBe(1);
          expect(outcome.positions.size).toBe(1);
        }
        for (const append of appends.slice(0, 32)) {
          expect((await store.readStream(append.streamId)).map((event) => event.id)).toEqual([
            append.events[0]!.id,
          ]);
        }
      });
    });

    describe('correlation and causation', () => {
      it('copies correlationId and causationId into metadata unless an event sets its own', async () => {
        const stream = streamId();
        await store.append(
          stream,
          [
            { id: randomUUID(), type: 'ThingCreated', data: {}, metadata: { source: 'api' } },
            {
              id: randomUUID(),
              type: 'ThingRenamed',
              data: {},
              metadata: { correlationId: 'own-correlation', causationId: 'own-cause' },
            },
          ],
          { correlationId: 'request-1', causationId: 'command-1' },
        );
        const [first, second] = await store.readStream(stream);
        expect(first?.metadata).toEqual({
          correlationId: 'request-1',
          causationId: 'command-1',
          source: 'api',
        });
        expect(second?.metadata).toEqual({ correlationId: 'own-correlation', causationId: 'own-cause' });
      });

      it('round-trips metadata through readAll and subscribe as well', async () => {
        const type = uniqueType('Correlated');
        const stream = streamId();
        await store.append(stream, [{ id: randomUUID(), type, data: {} }], { correlationId: 'c-9' });
        const [viaAll] = await readAllUntil(store, { eventTypes: [type] }, 1);
        expect(viaAll?.metadata).toMatchObject({ correlationId: 'c-9' });
        const [viaSubscription] = await collect(store, { eventTypes: [type] }, 1);
        expect(viaSubscription?.metadata).toMatchObject({ correlationId: 'c-9' });
      });
    });

    describe('readAll', () => {
      it('returns events of several streams in the order they were appended', async () => {
        const type = uniqueType('Ordered');
        const streams = [streamId(), streamId(), streamId()];
        const appended: string[] = [];
        for (let round = 0; round < 3; round++) {
          for (const stream of streams) {
            const id = randomUUID();
            await store.append(stream, [{ id, type, data: { round } }]);
            appended.push(id);
          }
        }
        const events = await readAllUntil(store, { eventTypes: [type] }, appended.length);
        expect(events.map((event) => event.id)).toEqual(appended);
        expect(events.every((event) => event.type === type)).toBe(true);
      });

      it('keeps the events of one append together and in order', async () => {
        const type = uniqueType('Batched');
        const first = numbered(4, 0, type);
        const second = numbered(4, 0, type);
        await store.append(streamId(), first);
        await store.append(streamId(), second);
        const events = await readAllUntil(store, { eventTypes: [type] }, 8);
        expect(events.map((event) => event.id)).toEqual([...first, ...second].map((event) => event.id));
      });

      it('pages with after and limit without losing or repeating an event', async () => {
        const type = uniqueType('Paged');
        const stream = streamId();
        const appended = numbered(7, 0, type);
        await store.append(stream, appended);
        await readAllUntil(store, { eventTypes: [type] }, 7);

        const seen: RecordedEvent[] = [];
        let after = START;
        for (let page = 0; page < 10; page++) {
          const result = await store.readAll({ after, limit: 3, eventTypes: [type] });
          expect(result.events.length).toBeLessThanOrEqual(3);
          seen.push(...result.events);
          if (result.events.length === 0) break;
          after = result.lastPosition;
        }
        expect(seen.map((event) => event.id)).toEqual(appended.map((event) => event.id));
      });

      it('returns only the requested event types', async () => {
        const [wanted, other, alsoWanted] = [
          uniqueType('Wanted'),
          uniqueType('Other'),
          uniqueType('AlsoWanted'),
        ];
        const stream = streamId();
        await store.append(stream, [
          { id: randomUUID(), type: wanted, data: { i: 0 } },
          { id: randomUUID(), type: other, data: { i: 1 } },
          { id: randomUUID(), type: alsoWanted, data: { i: 2 } },
          { id: randomUUID(), type: other, data: { i: 3 } },
          { id: randomUUID(), type: wanted, data: { i: 4 } },
        ]);
        const events = await readAllUntil(store, { eventTypes: [wanted, alsoWanted] }, 3);
        expect(events.map((event) => event.data)).toEqual([{ i: 0 }, { i: 2 }, { i: 4 }]);
      });

      it('returns nothing new after the last position it handed out', async () => {
        const type = uniqueType('Drained');
        await store.append(streamId(), numbered(2, 0, type));
        const events = await readAllUntil(store, { eventTypes: [type] }, 2);
        const page = await store.readAll({ after: events[1]!.position, eventTypes: [type] });
        expect(page.events).toEqual([]);
        const next = await store.readAll({ after: page.lastPosition, eventTypes: [type] });
        expect(next.events).toEqual([]);
      });

      it('reads from an event position onwards, exclusive of that event', async () => {
        const type = uniqueType('FromPosition');
        const appended = numbered(4, 0, type);
        await store.append(streamId(), appended);
        const all = await readAllUntil(store, { eventTypes: [type] }, 4);
        const page = await store.readAll({ after: all[1]!.position, eventTypes: [type] });
        expect(page.events.map((event) => event.id)).toEqual(appended.slice(2).map((event) => event.id));
      });

      it('gives each event a position equal to the one append reported for it', async () => {
        const type = uniqueType('Positioned');
        const result = await store.append(streamId(), numbered(2, 0, type));
        const events = await readAllUntil(store, { eventTypes: [type] }, 2);
        expect(events[1]?.position).toBe(result.position);
      });
    });

    describe('subscribe', () => {
      it('delivers existing events from START, then live ones, in order', async () => {
        const type = uniqueType('Subscribed');
        const stream = streamId();
        const before = numbered(3, 0, type);
        await store.append(stream, before);

        const received: RecordedEvent[] = [];
        const controller = new AbortController();
        let resolveLive!: () => void;
        const liveArrived = new Promise<void>((resolve) => {
          resolveLive = resolve;
        });
        const subscription = store.subscribe({
          after: START,
          eventTypes: [type],
          signal: controller.signal,
          handle: async (events) => {
            received.push(...events);
            if (received.length >= 5) resolveLive();
          },
        });
        await waitFor(() => received.length >= 3);
        const live = numbered(2, 3, type);
        await store.append(stream, live);
        await withTimeout(liveArrived, 10_000, 'live events were not delivered');
        controller.abort();
        await subscription.done;
        expect(received.map((event) => event.id)).toEqual([...before, ...live].map((event) => event.id));
      });

      it('starts after a checkpoint position and delivers only later events', async () => {
        const type = uniqueType('Checkpointed');
        const appended = numbered(5, 0, type);
        await store.append(streamId(), appended);
        const all = await readAllUntil(store, { eventTypes: [type] }, 5);
        const received = await collect(store, { after: all[2]!.position, eventTypes: [type] }, 2);
        expect(received.map((event) => event.id)).toEqual(appended.slice(3).map((event) => event.id));
      });

      it('hands each batch a lastPosition from which a new subscription resumes without gaps', async () => {
        const type = uniqueType('Resumed');
        const stream = streamId();
        await store.append(stream, numbered(3, 0, type));
        let checkpoint = START;
        const firstRun: RecordedEvent[] = [];
        const controller = new AbortController();
        const subscription = store.subscribe({
          eventTypes: [type],
          limit: 2,
          signal: controller.signal,
          handle: async (events, lastPosition) => {
            firstRun.push(...events);
            checkpoint = lastPosition;
          },
        });
        await waitFor(() => firstRun.length >= 3);
        controller.abort();
        await subscription.done;

        const later = numbered(2, 3, type);
        await store.append(stream, later);
        const secondRun = await collect(store, { after: checkpoint, eventTypes: [type] }, 2);
        expect(secondRun.map((event) => event.id)).toEqual(later.map((event) => event.id));
      });

      it('stops when the signal aborts and resolves done', async () => {
        const controller = new AbortController();
        const subscription = store.subscribe({
          eventTypes: [uniqueType('Never')],
          signal: controller.signal,
          handle: async () => {},
        });
        setTimeout(() => controller.abort(), 50);
        await expect(
          withTimeout(subscription.done, 5_000, 'subscription did not stop'),
        ).resolves.toBeUndefined();
      });

      it('rejects done with the error the handler threw', async () => {
        const type = uniqueType('Failing');
        await store.append(streamId(), numbered(1, 0, type));
        const controller = new AbortController();
        const failure = new Error('handler failed');
        const subscription = store.subscribe({
          eventTypes: [type],
          signal: controller.signal,
          handle: async () => {
            throw failure;
          },
        });
        try {
          await expect(withTimeout(subscription.done, 10_000, 'handler error not surfaced')).rejects.toBe(
            failure,
          );
        } finally {
          controller.abort();
        }
      });
    });
  });
}

const RUN = randomUUID().slice(0, 8);
let streamCounter = 0;
let typeCounter = 0;

function streamId(): string {
  return `contract_${RUN}-${++streamCounter}`;
}

function uniqueType(base: string): string {
  return `${base}_${RUN}_${++typeCounter}`;
}

function numbered(count: number, from = 0, type = 'ThingCounted'): NewEvent[] {
  return Array.from({ length: count }, (_, i) => ({ id: randomUUID(), type, data: { n: from + i } }));
}

/** Reads "all" from START with the given filter until `count` events are visible. */
export async function readAllUntil(
  store: EventStore,
  options: Omit<ReadAllOptions, 'after'>,
  count: number,
  timeoutMs = 10_000,
): Promise<RecordedEvent[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events: RecordedEvent[] = [];
    let after = START;
    for (;;) {
      const page = await store.readAll({ ...options, after });
      events.push(...page.events);
      if (page.events.length === 0 || page.lastPosition === after) break;
      after = page.lastPosition;
    }
    if (events.length >= count) return events;
    if (Date.now() > deadline) throw new Error(`only ${events.length} of ${count} events became readable`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Subscribes until `count` events arrived, then stops. */
async function collect(
  store: EventStore,
  options: Omit<ReadAllOptions, 'limit'>,
  count: number,
): Promise<RecordedEvent[]> {
  const received: RecordedEvent[] = [];
  const controller = new AbortController();
  const subscription = store.subscribe({
    ...options,
    signal: controller.signal,
    handle: async (events) => {
      received.push(...events);
      if (received.length >= count) controller.abort();
    },
  });
  await withTimeout(
    subscription.done,
    10_000,
    `subscription delivered ${received.length} of ${count} events`,
  );
  return received;
}

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
