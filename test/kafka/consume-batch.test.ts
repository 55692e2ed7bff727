import type { Message } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventStore } from '../../src/eventstore/port.ts';
import { createPostgresEventStore, type PostgresEventStore } from '../../src/eventstore/postgres.ts';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import {
  type BatchControl,
  type ConsumeBatchOptions,
  chunksOf,
  consumeBatch,
} from '../../src/kafka/consume-batch.ts';
import type { SourceMessage } from '../../src/kafka/messages.ts';
import { TOPICS } from '../../src/kafka/topics.ts';
import { episodeEvent } from '../fixtures/events.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { consumed, failingFirst, silentLog } from './support.ts';

let testDb: TestDb;
let store: PostgresEventStore;
beforeAll(async () => {
  testDb = await createTestDb();
  store = createPostgresEventStore(testDb.db);
});
afterAll(async () => {
  await store.close();
  await testDb.drop();
});

/**
 * kafkajs's batch payload, recording what the handler does with it. No broker runs here: the
 * broker-backed suite (kafka.test.ts) checks the same handler under a real consumer group.
 */
function batchControl(
  messages: SourceMessage[],
  options: { onResolve?(offset: string): void; onCommit?(resolved: string): Promise<void> } = {},
) {
  const log: string[] = [];
  let running = true;
  let resolved = '';
  const control: BatchControl & { log: string[]; stop(): void } = {
    batch: {
      topic: messages[0]!.topic,
      partition: messages[0]!.partition,
      messages: messages as BatchControl['batch']['messages'],
    },
    resolveOffset(offset) {
      log.push(`resolve ${offset}`);
      resolved = offset;
      options.onResolve?.(offset);
    },
    async heartbeat() {
      log.push('heartbeat');
    },
    async commitOffsetsIfNecessary() {
      log.push('commit');
      await options.onCommit?.(resolved);
    },
    isRunning: () => running,
    isStale: () => false,
    log,
    stop() {
      running = false;
    },
  };
  return control;
}

function options(overrides: Partial<ConsumeBatchOptions> = {}) {
  const deadLetters: Message[] = [];
  return {
    deadLetters,
    options: {
      store,
      topics: TOPICS,
      now: () => new Date(),
      sendDeadLetters: async (messages: Message[]) => {
        deadLetters.push(...messages);
      },
      signal: new AbortController().signal,
      log: silentLog,
      backoff: { initialMs: 5, maxMs: 20 },
      heartbeatEveryMs: 5,
      ...overrides,
    } satisfies ConsumeBatchOptions,
  };
}

const stored = async (s: EventStore, events: EpisodeTranscribed[]) =>
  (await Promise.all(events.map((event) => s.readStream(`episode-${event.episode.id}`)))).filter(
    (x) => x.length,
  ).length;

describe('consumeBatch', () => {
  it('resolves and commits each chunk only after all its events are in the event store', async () => {
    const events = Array.from({ length: 7 }, () => episodeEvent());
    const messages = consumed(events, { firstOffset: 100 });
    const storedAtResolve: Record<string, number> = {};
    // The handler awaits the commit before it starts the next chunk, so counting here sees exactly
    // what was stored when the offset was resolved.
    const control = batchControl(messages, {
      onCommit: async (offset) => {
        storedAtResolve[offset] = await stored(store, events);
      },
    });
    await consumeBatch(control, options({ chunkSize: 3 }).options);
    expect(control.log.filter((entry) => entry !== 'heartbeat')).toEqual([
      'resolve 102',
      'commit',
      'resolve 105',
      'commit',
      'resolve 106',
      'commit',
    ]);
    expect(storedAtResolve).toEqual({ '102': 3, '105': 6, '106': 7 });
  });

  it('writes dead letters before resolving the offsets of their messages', async () => {
    const messages = consumed([{ topic: TOPICS.episodes, key: 'k', value: 'nope' }, episodeEvent()], {
      firstOffset: 7,
    });
    const { options: o, deadLetters } = options();
    let lettersAtResolve = -1;
    const control = batchControl(messages, {
      onResolve: () => {
        lettersAtResolve = deadLetters.length;
      },
    });
    await consumeBatch(control, o);
    expect(lettersAtResolve).toBe(1);
    expect(control.log).toContain('resolve 8');
  });

  it('retries a chunk with backoff while the store is down, heartbeating, and resolves it once stored', async () => {
    const events = [episodeEvent(), episodeEvent()];
    const flaky = failingFirst(store, 3);
    const control = batchControl(consumed(events));
    await consumeBatch(control, options({ store: flaky, appendConcurrency: 1 }).options);
    expect(flaky.attempts).toBe(5);
    const firstResolve = control.log.indexOf('resolve 1');
    expect(control.log.slice(0, firstResolve)).toContain('heartbeat');
    expect(control.log.filter((entry) => entry.startsWith('resolve'))).toEqual(['resolve 1']);
    expect(await stored(store, events)).toBe(2);
  });

  it('keeps retrying the dead letters while the dead-letter topic refuses them, never committing past them', async () => {
    let refusals = 2;
    const { options: o, deadLetters } = options({
      sendDeadLetters: async (messages) => {
        if (refusals-- > 0) throw new Error('NOT_ENOUGH_REPLICAS');
        deadLetters.push(...messages);
      },
    });
    const control = batchControl(consumed([{ topic: TOPICS.episodes, key: null, value: '{}' }]));
    await consumeBatch(control, o);
    expect(deadLetters).toHaveLength(1);
    expect(control.log.filter((entry) => entry.startsWith('resolve'))).toEqual(['resolve 0']);
  });

  it('stops between chunks when the consumer stops, leaving the rest unresolved for redelivery', async () => {
    const events = Array.from({ length: 6 }, () => episodeEvent());
    const control = batchControl(consumed(events), { onResolve: () => control.stop() });
    await consumeBatch(control, options({ chunkSize: 2 }).options);
    expect(control.log.filter((entry) => entry.startsWith('resolve'))).toEqual(['resolve 1']);
    expect(await stored(store, events)).toBe(2);
  });

  it('gives up without resolving anything when aborted while the store stays down', async () => {
    const controller = new AbortController();
    const down = failingFirst(store, Number.POSITIVE_INFINITY);
    const control = batchControl(consumed([episodeEvent()]));
    setTimeout(() => controller.abort(), 50);
    await consumeBatch(control, options({ store: down, signal: controller.signal }).options);
    expect(down.attempts).toBeGreaterThan(1);
    expect(control.log.filter((entry) => entry.startsWith('resolve'))).toEqual([]);
  });
});

describe('chunksOf', () => {
  it('splits in order into runs of at most the size', () => {
    expect(chunksOf([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(chunksOf([], 3)).toEqual([]);
  });

  it('refuses a size that is not a positive integer', () => {
    expect(() => chunksOf([1], 0)).toThrow(RangeError);
  });
});
