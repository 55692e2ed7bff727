import type { Message } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresEventStore, type PostgresEventStore } from '../../src/eventstore/postgres.ts';
import { chartStream } from '../../src/ingestion/events.ts';
import { readDeadLetter } from '../../src/kafka/dead-letter.ts';
import { ingestMessages } from '../../src/kafka/ingest-messages.ts';
import { decodeMessage } from '../../src/kafka/messages.ts';
import { TOPICS } from '../../src/kafka/topics.ts';
import { rankingEvent } from '../fixtures/rankings.ts';
import { consumed } from '../kafka/support.ts';
import { createTestDb, type TestDb } from '../support/db.ts';

const KEY = 'apple/top_podcasts/us/technology';
const capture = () => rankingEvent({ category: { slug: 'technology' } });
const message = (topic: string, key: string, value: unknown) => ({
  topic,
  key: Buffer.from(key),
  value: Buffer.from(JSON.stringify(value)),
});

describe('ranking.captured through Kafka', () => {
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

  it('decodes a capture keyed by its chart key on the rankings topic', () => {
    const event = capture();
    expect(decodeMessage(message(TOPICS.rankings, KEY, event))).toEqual({ ok: true, event });
  });

  it('refuses a capture under another key or on another topic', () => {
    const event = capture();
    expect(decodeMessage(message(TOPICS.rankings, 'apple/top_podcasts/us/', event))).toEqual({
      ok: false,
      errors: [
        { location: '/chart', message: expect.stringMatching(/must equal the message key/), value: KEY },
      ],
    });
    expect(decodeMessage(message(TOPICS.episodes, KEY, event))).toMatchObject({
      ok: false,
      errors: [{ location: '/type', message: 'belongs on topic earshot.rankings, not earshot.episodes' }],
    });
  });

  it('appends valid captures to their chart stream and dead-letters invalid ones with their errors', async () => {
    const good = capture();
    const bad = { ...capture(), entries: [{ rank: 0, external_id: 'x', show: { name: 'X' } }] };
    const deadLetters: Message[] = [];
    const result = await ingestMessages(
      consumed([good, { topic: TOPICS.rankings, key: KEY, value: JSON.stringify(bad) }]),
      {
        store,
        topics: TOPICS,
        now: () => new Date('2026-11-20T10:00:00Z'),
        sendDeadLetters: async (messages) => {
          deadLetters.push(...messages);
        },
      },
    );
    expect(result).toEqual({ appended: 1, duplicates: 0, deadLettered: 1 });
    expect(readDeadLetter(deadLetters[0]!.headers).errors.map((e) => e.location)).toEqual([
      '/entries/0/rank',
    ]);
    const stored = await store.readStream(chartStream(KEY));
    expect(stored.map((e) => [e.type, e.data])).toEqual([['RankingCaptured', good]]);
  });
});
