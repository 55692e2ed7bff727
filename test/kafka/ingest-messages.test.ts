import type { Message } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db/postgres.ts';
import { ValidationError } from '../../src/errors.ts';
import { createPostgresEventStore, type PostgresEventStore } from '../../src/eventstore/postgres.ts';
import { storedEventId } from '../../src/ingestion/events.ts';
import { readDeadLetter } from '../../src/kafka/dead-letter.ts';
import {
  groupByStream,
  type IngestMessagesDeps,
  ingestMessages,
  inParallel,
  isPermanentStoreError,
} from '../../src/kafka/ingest-messages.ts';
import { TOPICS } from '../../src/kafka/topics.ts';
import { entityEvent, episodeEvent } from '../fixtures/events.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { consumed, failingFirst } from './support.ts';

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

function deps(overrides: Partial<IngestMessagesDeps> = {}) {
  const deadLetters: Message[] = [];
  return {
    deadLetters,
    deps: {
      store,
      topics: TOPICS,
      now: () => new Date('2026-11-20T10:00:00Z'),
      sendDeadLetters: async (messages: Message[]) => {
        deadLetters.push(...messages);
      },
      ...overrides,
    } satisfies IngestMessagesDeps,
  };
}

describe('ingestMessages', () => {
  it('appends every valid event to its stream under the id derived from its event_id', async () => {
    const episode = episodeEvent();
    const entity = entityEvent({ id: `ent-${episode.episode.id}`, name: 'Lisa Su' });
    const { deps: d, deadLetters } = deps();
    const result = await ingestMessages(consumed([episode, entity]), d);
    expect(result).toEqual({ appended: 2, duplicates: 0, deadLettered: 0 });
    expect(deadLetters).toEqual([]);
    const [stored] = await store.readStream(`episode-${episode.episode.id}`);
    expect(stored).toMatchObject({
      id: storedEventId(episode.event_id),
      type: 'EpisodeTranscribed',
      data: episode,
    });
    expect((await store.readStream(`entity-${entity.entity.id}`))[0]?.data).toEqual(entity);
  });

  it('treats a redelivered message, in the same run or a later one, as a no-op', async () => {
    const episode = episodeEvent();
    const { deps: d } = deps();
    expect(await ingestMessages(consumed([episode, episode]), d)).toEqual({
      appended: 1,
      duplicates: 1,
      deadLettered: 0,
    });
    expect(await ingestMessages(consumed([episode]), d)).toEqual({
      appended: 0,
      duplicates: 1,
      deadLettered: 0,
    });
    expect(await store.readStream(`episode-${episode.episode.id}`)).toHaveLength(1);
  });

  it('keeps the order of one episode’s versions', async () => {
    const first = episodeEvent({ lines: ['first'] });
    const second = { ...episodeEvent({ id: first.episode.id, lines: ['second'] }) };
    const third = { ...episodeEvent({ id: first.episode.id, lines: ['third'] }) };
    const others = Array.from({ length: 20 }, () => episodeEvent());
    const { deps: d } = deps({ appendConcurrency: 8 });
    await ingestMessages(consumed([first, ...others.slice(0, 10), second, ...others.slice(10), third]), d);
    const versions = await store.readStream(`episode-${first.episode.id}`);
    expect(versions.map((v) => (v.data as typeof first).transcript?.lines?.[0]?.text)).toEqual([
      'first',
      'second',
      'third',
    ]);
  });

  it('dead-letters invalid messages in offset order, with their errors and source, and stores the rest', async () => {
    const good = episodeEvent();
    const messages = consumed(
      [
        { topic: TOPICS.episodes, key: 'x', value: 'not json' },
        good,
        {
          topic: TOPICS.episodes,
          key: 'ep-x',
          value: JSON.stringify({ ...episodeEvent({ id: 'ep-x' }), episode: {} }),
        },
      ],
      { partition: 2, firstOffset: 40 },
    );
    const { deps: d, deadLetters } = deps();
    expect(await ingestMessages(messages, d)).toEqual({ appended: 1, duplicates: 0, deadLettered: 2 });
    expect(deadLetters.map((letter) => String(letter.value))).toEqual([
      'not json',
      String(messages[2]!.value),
    ]);
    const [notJson, invalid] = deadLetters.map((letter) => readDeadLetter(letter.headers));
    expect(notJson).toMatchObject({
      errors: [{ location: '/', message: expect.stringMatching(/^is not JSON/) }],
      source: { topic: TOPICS.episodes, partition: 2, offset: '40' },
    });
    expect(invalid?.source.offset).toBe('42');
    expect(invalid?.errors.map((error) => error.location)).toContain('/episode/id');
    expect(await store.readStream(`episode-${good.episode.id}`)).toHaveLength(1);
  });

  it('dead-letters an event with a NUL character, which no read model could store', async () => {
    const poisoned = episodeEvent({ lines: ['nul \u0000 byte'] });
    const fine = episodeEvent();
    const { deps: d, deadLetters } = deps();
    expect(await ingestMessages(consumed([poisoned, fine]), d)).toEqual({
      appended: 1,
      duplicates: 0,
      deadLettered: 1,
    });
    expect(readDeadLetter(deadLetters[0]!.headers).errors).toEqual([
      { location: '/transcript/lines/0/text', message: expect.stringMatching(/NUL character/) },
    ]);
    expect(await store.readStream(`episode-${poisoned.episode.id}`)).toEqual([]);
  });

  it('fails, storing nothing it has not stored, when the database is down', async () => {
    const down = openPostgres({ connectionString: 'postgres://postgres@127.0.0.1:1/test', max: 1 });
    const downStore = createPostgresEventStore(down);
    const { deps: d, deadLetters } = deps({ store: downStore });
    try {
      await expect(
        ingestMessages(consumed([episodeEvent(), { topic: TOPICS.episodes, key: null, value: '{' }]), d),
      ).rejects.toThrow(/ECONNREFUSED|connect/);
      expect(deadLetters).toEqual([]);
    } finally {
      await downStore.close().catch(() => {});
      await down.close();
    }
  });

  it('fails when the dead letters cannot be written, and a retry after recovery stores each event once', async () => {
    const events = [episodeEvent(), episodeEvent()];
    const messages = consumed([...events, { topic: TOPICS.episodes, key: null, value: '[]' }]);
    const broken = deps({
      sendDeadLetters: async () => {
        throw new Error('NOT_ENOUGH_REPLICAS');
      },
    });
    await expect(ingestMessages(messages, broken.deps)).rejects.toThrow('NOT_ENOUGH_REPLICAS');
    const { deps: d, deadLetters } = deps();
    expect(await ingestMessages(messages, d)).toEqual({ appended: 0, duplicates: 2, deadLettered: 1 });
    expect(deadLetters).toHaveLength(1);
    for (const event of events) expect(await store.readStream(`episode-${event.episode.id}`)).toHaveLength(1);
  });

  it('stops starting appends after a transient failure and rethrows it', async () => {
    const flaky = failingFirst(store, 1);
    const { deps: d } = deps({ store: flaky, appendConcurrency: 1 });
    await expect(
      ingestMessages(consumed([episodeEvent(), episodeEvent(), episodeEvent()]), d),
    ).rejects.toThrow('Connection terminated unexpectedly');
    expect(flaky.attempts).toBe(1);
  });
});

describe('isPermanentStoreError', () => {
  it('is true for data exceptions, program limits and validation errors, false otherwise', () => {
    expect(isPermanentStoreError(Object.assign(new Error('x'), { code: '22P05' }))).toBe(true);
    expect(isPermanentStoreError(Object.assign(new Error('x'), { code: '54000' }))).toBe(true);
    expect(isPermanentStoreError(new ValidationError('empty_append', 'x'))).toBe(true);
    expect(isPermanentStoreError(Object.assign(new Error('x'), { code: '57P01' }))).toBe(false);
    expect(isPermanentStoreError(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe(false);
    expect(isPermanentStoreError(new Error('socket hang up'))).toBe(false);
  });
});

describe('groupByStream', () => {
  it('groups by stream in first-seen order, keeping each stream’s order', () => {
    const a1 = episodeEvent({ id: 'a' });
    const b1 = episodeEvent({ id: 'b' });
    const a2 = episodeEvent({ id: 'a' });
    const e1 = entityEvent({ id: 'a', name: 'A' });
    const groups = groupByStream([a1, b1, a2, e1].map((event, index) => ({ index, event })));
    expect(groups.map((group) => group.map((item) => item.index))).toEqual([[0, 2], [1], [3]]);
  });
});

describe('inParallel', () => {
  it('never runs more than the limit at once', async () => {
    let running = 0;
    let most = 0;
    await inParallel(
      Array.from({ length: 20 }, (_, i) => i),
      4,
      async () => {
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 2));
        running--;
      },
    );
    expect(most).toBe(4);
  });

  it('waits for work in flight before rethrowing the first failure', async () => {
    const finished: number[] = [];
    const run = inParallel([0, 1, 2, 3], 2, async (i) => {
      if (i === 0) throw new Error('first');
      await new Promise((resolve) => setTimeout(resolve, 20));
      finished.push(i);
    });
    await expect(run).rejects.toThrow('first');
    expect(finished).toEqual([1]);
  });
});
