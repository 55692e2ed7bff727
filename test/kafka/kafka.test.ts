import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kafka, KafkaMessage } from 'kafkajs';
import { GenericContainer, getContainerRuntimeClient, type StartedTestContainer, Wait } from 'testcontainers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresEventStore, type PostgresEventStore } from '../../src/eventstore/postgres.ts';
import { storedEventId } from '../../src/ingestion/events.ts';
import { createKafka } from '../../src/kafka/client.ts';
import { readDeadLetter } from '../../src/kafka/dead-letter.ts';
import { ingestFileViaKafka } from '../../src/kafka/ingest-file.ts';
import { type KafkaIngestionOptions, runKafkaIngestion } from '../../src/kafka/ingestion-worker.ts';
import { encodeEvent } from '../../src/kafka/messages.ts';
import { ensureTopics, type Topics } from '../../src/kafka/topics.ts';
import { entityEvent, episodeEvent } from '../fixtures/events.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { silentLog, storedIngestEvents } from './support.ts';

const IMAGE = 'apache/kafka:3.9.0';

type Broker = { brokers: string[]; via: string; container?: StartedTestContainer } | { skipped: string };

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * A real broker: KAFKA_BROKERS, else a single KRaft node started through testcontainers when a Docker
 * engine answers, else none. The node advertises the host port it is bound to, so it is fixed up front.
 */
async function findBroker(): Promise<Broker> {
  const listed = process.env.KAFKA_BROKERS?.split(',')
    .map((broker) => broker.trim())
    .filter(Boolean);
  if (listed?.length) return { brokers: listed, via: 'KAFKA_BROKERS' };
  try {
    await getContainerRuntimeClient();
  } catch (error) {
    return { skipped: `KAFKA_BROKERS unset and no Docker engine answered (${(error as Error).message})` };
  }
  const port = await freePort();
  const container = await new GenericContainer(IMAGE)
    .withExposedPorts({ container: 9092, host: port })
    .withEnvironment({
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_LISTENERS: 'PLAINTEXT://:9092,CONTROLLER://:9093',
      KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://127.0.0.1:${port}`,
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
      KAFKA_NUM_PARTITIONS: '3',
      KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false',
    })
    .withWaitStrategy(Wait.forLogMessage(/Kafka Server started/))
    .withStartupTimeout(180_000)
    .start();
  return { brokers: [`127.0.0.1:${port}`], via: `testcontainers (${IMAGE})`, container };
}

const broker = await findBroker();
const brokers = 'brokers' in broker ? broker.brokers : undefined;
const skipped = 'skipped' in broker ? broker.skipped : undefined;
if (skipped) console.warn(`[kafka.test] Kafka transport suite skipped: ${skipped}`);

const topicsFor = (): Topics => {
  const run = randomUUID().slice(0, 8);
  return {
    episodes: `t-${run}.episodes`,
    entities: `t-${run}.entities`,
    podcasts: `t-${run}.podcasts`,
    rankings: `t-${run}.rankings`,
    deadLetter: `t-${run}.dead-letter`,
  };
};

async function waitFor<T>(
  what: string,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; last saw ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.skipIf(!brokers)(
  `Kafka transport on a real broker${skipped ? ` (skipped: ${skipped})` : ` via ${'via' in broker ? broker.via : ''}`}`,
  () => {
    let testDb: TestDb;
    let store: PostgresEventStore;
    let kafka: Kafka;
    const running: Array<{ stop(): Promise<void> }> = [];
    const children: ChildProcess[] = [];

    beforeAll(async () => {
      testDb = await createTestDb();
      store = createPostgresEventStore(testDb.db);
      kafka = createKafka(brokers!, { clientId: 'earshot-test', log: silentLog });
    });
    afterAll(async () => {
      for (const child of children) child.kill('SIGKILL');
      await Promise.all(running.map((consumer) => consumer.stop()));
      await store?.close();
      await testDb?.drop();
      if ('container' in broker) await broker.container?.stop();
    });

    function startIngestion(topics: Topics, overrides: Partial<KafkaIngestionOptions> = {}) {
      const controller = new AbortController();
      const done = runKafkaIngestion(
        {
          brokers: brokers!,
          store,
          log: silentLog,
          topics,
          groupId: `g-${randomUUID()}`,
          sessionTimeoutMs: 6000,
          ...overrides,
        },
        controller.signal,
      );
      const handle = {
        async stop() {
          controller.abort();
          await done;
        },
      };
      running.push(handle);
      return handle;
    }

    async function createTopics(topics: Topics) {
      const admin = kafka.admin();
      await admin.connect();
      try {
        await ensureTopics(admin, topics);
      } finally {
        await admin.disconnect();
      }
    }

    async function produce(topic: string, messages: Array<{ key: string | null; value: string }>) {
      const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      try {
        await producer.send({ topic, messages, acks: -1 });
      } finally {
        await producer.disconnect();
      }
    }

    async function readTopic(topic: string, count: number): Promise<KafkaMessage[]> {
      const consumer = kafka.consumer({ groupId: `reader-${randomUUID()}` });
      const messages: KafkaMessage[] = [];
      await consumer.connect();
      try {
        await consumer.subscribe({ topics: [topic], fromBeginning: true });
        await consumer.run({
          eachMessage: async ({ message }) => {
            messages.push(message);
          },
        });
        await waitFor(
          `${count} messages on ${topic}`,
          async () => messages.length,
          (n) => n >= count,
        );
        return messages;
      } finally {
        await consumer.disconnect();
      }
    }

    const storedIds = async () => (await storedIngestEvents(store)).map((event) => event.id);

    it('produces a file through the topics and the consumer group appends every valid event to the store', async () => {
      const topics = topicsFor();
      const episodes = Array.from({ length: 30 }, () => episodeEvent());
      const entities = Array.from({ length: 10 }, (_, i) =>
        entityEvent({ id: `ent-${randomUUID()}`, name: `Entity ${i}` }),
      );
      const file = join(mkdtempSync(join(tmpdir(), 'earshot-kafka-')), 'events.ndjson');
      const lines = [...episodes, ...entities].map((event) => JSON.stringify(event));
      writeFileSync(
        file,
        `${lines.slice(0, 5).join('\n')}\n{"type":"episode.transcribed"}\n${lines.slice(5).join('\n')}\n`,
      );
      const rejected: number[] = [];
      const result = await ingestFileViaKafka(
        brokers!,
        file,
        { onRejected: (line) => rejected.push(line) },
        { topics, log: silentLog },
      );
      expect(result).toEqual({ accepted: 40, duplicates: 0, rejected: 1 });
      expect(rejected).toEqual([6]);

      const before = new Set(await storedIds());
      const ingestion = startIngestion(topics);
      const expected = [...episodes, ...entities].map((event) => storedEventId(event.event_id));
      const ids = await waitFor('40 stored events', storedIds, (all) =>
        expected.every((id) => all.includes(id)),
      );
      await ingestion.stop();
      expect(ids.filter((id) => !before.has(id)).sort()).toEqual([...expected].sort());
      const episode = episodes[0]!;
      expect((await store.readStream(`episode-${episode.episode.id}`))[0]?.data).toEqual(episode);
    });

    it('moves an invalid message to the dead-letter topic with its errors in headers, then commits past it', async () => {
      const topics = topicsFor();
      const valid = episodeEvent();
      await createTopics(topics);
      await produce(topics.episodes, [
        {
          key: 'bad-1',
          value: JSON.stringify({ ...episodeEvent({ id: 'bad-1' }), episode: { id: 'bad-1' } }),
        },
        { key: valid.episode.id, value: JSON.stringify(valid) },
      ]);
      const groupId = `g-${randomUUID()}`;
      const ingestion = startIngestion(topics, { groupId });
      await waitFor('the valid event', storedIds, (ids) => ids.includes(storedEventId(valid.event_id)));
      const [letter] = await readTopic(topics.deadLetter, 1);
      expect(letter?.key?.toString()).toBe('bad-1');
      const dead = readDeadLetter(letter?.headers);
      expect(dead.source.topic).toBe(topics.episodes);
      expect(dead.errors.map((error) => error.location).sort()).toEqual([
        '/episode/duration_seconds',
        '/episode/published_at',
        '/episode/title',
      ]);
      await ingestion.stop();

      const admin = kafka.admin();
      await admin.connect();
      try {
        const [committed] = await admin.fetchOffsets({ groupId, topics: [topics.episodes] });
        const total = committed!.partitions.reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
        expect(total).toBe(2);
      } finally {
        await admin.disconnect();
      }
    });

    it('stores a message delivered twice, and again to a new group, as one event', async () => {
      const topics = topicsFor();
      const event = episodeEvent();
      const { message } = encodeEvent(event, topics);
      await createTopics(topics);
      await produce(topics.episodes, [
        { key: String(message.key), value: String(message.value) },
        { key: String(message.key), value: String(message.value) },
      ]);
      const first = startIngestion(topics);
      await waitFor('the event', storedIds, (ids) => ids.includes(storedEventId(event.event_id)));
      await first.stop();
      // A new group reads the topic from the start; a later version of the same episode, on the same
      // partition, shows when it has gone past both copies.
      const second = startIngestion(topics);
      const later = episodeEvent({ id: event.episode.id, lines: ['a later version'] });
      await produce(topics.episodes, [{ key: later.episode.id, value: JSON.stringify(later) }]);
      await waitFor('the later version', storedIds, (ids) => ids.includes(storedEventId(later.event_id)));
      await second.stop();
      const stream = await store.readStream(`episode-${event.episode.id}`);
      expect(stream.map((stored) => stored.id)).toEqual([
        storedEventId(event.event_id),
        storedEventId(later.event_id),
      ]);
    });

    it('loses nothing and doubles nothing when a consumer is killed mid-batch and another takes over', async () => {
      const topics = topicsFor();
      const groupId = `g-${randomUUID()}`;
      const events = Array.from({ length: 200 }, () => episodeEvent());
      await createTopics(topics);
      await produce(
        topics.episodes,
        events.map((event) => ({ key: event.episode.id, value: JSON.stringify(event) })),
      );
      const expected = new Set(events.map((event) => storedEventId(event.event_id)));
      const ours = async () => (await storedIds()).filter((id) => expected.has(id));

      const child = spawn(
        process.execPath,
        ['--import', 'tsx', fileURLToPath(new URL('./ingest-process.ts', import.meta.url))],
        {
          env: {
            ...process.env,
            KAFKA_BROKERS: brokers!.join(','),
            EARSHOT_TEST_SCHEMA: testDb.schema,
            EARSHOT_TEST_TOPICS: JSON.stringify(topics),
            EARSHOT_TEST_GROUP: groupId,
            EARSHOT_TEST_APPEND_DELAY_MS: '25',
          },
          stdio: ['ignore', 'ignore', 'inherit'],
        },
      );
      children.push(child);
      await waitFor('the first member to store some events', ours, (ids) => ids.length >= 20, 90_000);
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      const atKill = (await ours()).length;
      expect(atKill).toBeLessThan(events.length);

      const takeover = startIngestion(topics, { groupId });
      const ids = await waitFor('every event', ours, (all) => all.length >= events.length, 120_000);
      await takeover.stop();
      expect(new Set(ids)).toEqual(expected);
      expect(ids).toHaveLength(events.length);
      for (const event of events.slice(0, 20)) {
        expect(await store.readStream(`episode-${event.episode.id}`)).toHaveLength(1);
      }
    }, 240_000);
  },
);
