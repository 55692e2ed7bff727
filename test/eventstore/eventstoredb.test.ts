import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { KurrentDBClient } from '@kurrent/kurrentdb-client';
import { GenericContainer, getContainerRuntimeClient, type StartedTestContainer, Wait } from 'testcontainers';
import { afterAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.ts';
import { createEventStoreDbStore, EventStoreUnavailableError } from '../../src/eventstore/eventstoredb.ts';
import type { EventStore, RecordedEvent } from '../../src/eventstore/port.ts';
import { START } from '../../src/eventstore/port.ts';
import { describeEventStoreContract, readAllUntil } from './contract.ts';

type Server = { url: string; via: string; container?: StartedTestContainer } | { skipped: string };

/**
 * A real server: EVENTSTORE_URL (e.g. kurrentdb://127.0.0.1:2113?tls=false), else an insecure
 * single node started through testcontainers when a Docker engine answers, else none.
 */
async function findServer(): Promise<Server> {
  if (process.env.EVENTSTORE_URL) return { url: process.env.EVENTSTORE_URL, via: 'EVENTSTORE_URL' };
  try {
    await getContainerRuntimeClient();
  } catch (error) {
    return { skipped: `EVENTSTORE_URL unset and no Docker engine answered (${(error as Error).message})` };
  }
  const image = process.env.EVENTSTORE_IMAGE ?? 'docker.kurrent.io/kurrent-latest/kurrentdb:latest';
  const prefix = image.includes('kurrent') ? 'KURRENTDB' : 'EVENTSTORE';
  const container = await new GenericContainer(image)
    .withEnvironment({ [`${prefix}_INSECURE`]: 'true', [`${prefix}_MEM_DB`]: 'true' })
    .withExposedPorts(2113)
    .withWaitStrategy(Wait.forHttp('/health/live', 2113).forStatusCode(204))
    .withStartupTimeout(180_000)
    .start();
  return {
    url: `kurrentdb://${container.getHost()}:${container.getMappedPort(2113)}?tls=false`,
    via: `testcontainers (${image})`,
    container,
  };
}

const server = await findServer();
const serverUrl = 'url' in server ? server.url : undefined;
if ('skipped' in server) {
  console.warn(`[eventstoredb.test] EventStoreDB contract and server tests skipped: ${server.skipped}`);
}
afterAll(async () => {
  if ('container' in server) await server.container?.stop();
});

// The shared contract suite needs a real server; without one it is skipped, and its title and
// the warning above say why (no EVENTSTORE_URL and no Docker engine to start one).
describe.skipIf(!serverUrl)(
  `EventStore contract on EventStoreDB${'skipped' in server ? ` (skipped: ${server.skipped})` : ''}`,
  () => {
    describeEventStoreContract(`EventStoreDB via ${'via' in server ? server.via : ''}`, async () => {
      const store = createEventStoreDbStore(serverUrl!);
      return { store, cleanup: () => store.close() };
    });
  },
);

describe.skipIf(!serverUrl)(
  `EventStoreDB adapter on a real server${serverUrl ? '' : ' (skipped: EVENTSTORE_URL unset and no Docker engine answered)'}`,
  () => {
    const stores: EventStore[] = [];
    const open = (options?: Parameters<typeof createEventStoreDbStore>[1]) => {
      const store = createEventStoreDbStore(serverUrl!, options);
      stores.push(store);
      return store;
    };
    afterAll(async () => {
      await Promise.all(stores.map((store) => store.close()));
    });
    const stream = () => `esdbtest-${randomUUID()}`;

    it('keeps ids that are not UUIDs and treats their repetition as a duplicate', async () => {
      const store = open();
      const id = `ingest:episode-${randomUUID()}:transcribed`;
      const streamId = stream();
      const first = await store.append(streamId, [{ id, type: 'EpisodeTranscribed', data: { n: 1 } }]);
      const again = await store.append(streamId, [{ id, type: 'EpisodeTranscribed', data: { n: 1 } }]);
      expect(again).toEqual({ ...first, duplicate: true });
      const events = await store.readStream(streamId);
      expect(events.map((event) => event.id)).toEqual([id]);
      expect(events[0]?.metadata).toEqual({});
    });

    it("stores correlation and causation under EventStoreDB's own metadata keys", async () => {
      const store = open();
      const streamId = stream();
      await store.append(streamId, [{ id: randomUUID(), type: 'ThingHappened', data: {} }], {
        correlationId: 'corr-1',
        causationId: 'cause-1',
      });
      const client = KurrentDBClient.connectionString(serverUrl!);
      try {
        for await (const resolved of client.readStream(streamId)) {
          expect(resolved.event?.metadata).toMatchObject({
            $correlationId: 'corr-1',
            $causationId: 'cause-1',
          });
        }
      } finally {
        await client.dispose();
      }
    });

    it('never hands out system events from $all', async () => {
      const store = open();
      await store.append(stream(), [{ id: randomUUID(), type: 'ThingHappened', data: {} }]);
      const page = await store.readAll({ after: START, limit: 1000 });
      expect(page.events.length).toBeGreaterThan(0);
      expect(page.events.every((event: RecordedEvent) => !event.type.startsWith('$'))).toBe(true);
    });

    it('stores an event once when two processes that remember nothing append it at the same moment', async () => {
      const [a, b] = [open({ idIndexSize: 0 }), open({ idIndexSize: 0 })];
      const streamId = stream();
      const events = [
        { id: randomUUID(), type: 'ThingHappened', data: { i: 0 } },
        { id: randomUUID(), type: 'ThingHappened', data: { i: 1 } },
      ];
      for (let round = 0; round < 5; round++) {
        await Promise.all([a.append(streamId, events), b.append(streamId, events)]);
      }
      const results = await Promise.all([a.append(streamId, events), b.append(streamId, events)]);
      expect(results.every((result) => result.duplicate)).toBe(true);
      expect((await a.readStream(streamId)).map((event) => event.id)).toEqual(
        events.map((event) => event.id),
      );
    });

    it('resumes readAll from a position it handed out through another connection', async () => {
      const type = `Resumable_${randomUUID().slice(0, 8)}`;
      const writer = open();
      const reader = open();
      const first = await writer.append(stream(), [{ id: randomUUID(), type, data: { n: 0 } }]);
      const second = { id: randomUUID(), type, data: { n: 1 } };
      await writer.append(stream(), [second]);
      await readAllUntil(reader, { eventTypes: [type] }, 2);
      const page = await reader.readAll({ after: first.position, eventTypes: [type] });
      expect(page.events.map((event) => event.id)).toEqual([second.id]);
    });
  },
);

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('EventStoreDB adapter without a server', () => {
  it('reports an unreachable server as unavailable, naming it without its credentials', async () => {
    const port = await closedPort();
    const store = createEventStoreDbStore(`esdb://admin:secret@127.0.0.1:${port}?tls=false`);
    try {
      for (const attempt of [
        () => store.append('alert-1', [{ type: 'AlertCreated', data: {} }]),
        () => store.readStream('alert-1'),
        () => store.readAll({ after: START }),
      ]) {
        const error = await attempt().catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(EventStoreUnavailableError);
        expect((error as Error).message).toContain(`kurrentdb://***@127.0.0.1:${port}`);
        expect((error as Error).message).not.toContain('secret');
      }
    } finally {
      await store.close();
    }
  });

  it('keeps a subscription retrying while the server is unreachable, and stops it on abort', async () => {
    const port = await closedPort();
    const store = createEventStoreDbStore(`kurrentdb://127.0.0.1:${port}?tls=false`, { maxRetryDelayMs: 50 });
    const controller = new AbortController();
    const handled: unknown[] = [];
    const subscription = store.subscribe({
      signal: controller.signal,
      handle: async (events) => {
        handled.push(...events);
      },
    });
    const settled = watchSettled(subscription.done);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(settled.state).toBe('pending');
    controller.abort();
    await expect(subscription.done).resolves.toBeUndefined();
    expect(handled).toEqual([]);
    await store.close();
  });

  it('rejects invalid appends before contacting the server', async () => {
    const store = createEventStoreDbStore(`kurrentdb://127.0.0.1:${await closedPort()}?tls=false`);
    try {
      await expect(store.append('alert-1', [])).rejects.toMatchObject({ errorCode: 'empty_append' });
      await expect(
        store.append('alert-1', [{ type: 'A', data: {} }], { expectedRevision: -2 }),
      ).rejects.toBeInstanceOf(ValidationError);
      const id = randomUUID();
      await expect(
        store.append('alert-1', [
          { id, type: 'A', data: {} },
          { id, type: 'B', data: {} },
        ]),
      ).rejects.toMatchObject({ errorCode: 'duplicate_event_id' });
      await expect(store.append('$settings', [{ type: 'A', data: {} }])).rejects.toThrow(/system streams/);
      await expect(store.readAll({ after: 'not-a-position' })).rejects.toMatchObject({
        errorCode: 'invalid_position',
      });
    } finally {
      await store.close();
    }
  });

  it('refuses work once closed', async () => {
    const store = createEventStoreDbStore(`kurrentdb://127.0.0.1:${await closedPort()}?tls=false`);
    await store.close();
    await expect(store.readStream('alert-1')).rejects.toThrow(/closed/);
  });
});

function watchSettled(promise: Promise<unknown>): { state: 'pending' | 'resolved' | 'rejected' } {
  const result: { state: 'pending' | 'resolved' | 'rejected' } = { state: 'pending' };
  promise.then(
    () => {
      result.state = 'resolved';
    },
    () => {
      result.state = 'rejected';
    },
  );
  return result;
}
