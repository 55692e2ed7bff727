/**
 * One member of the ingestion consumer group in its own process, so kafka.test.ts can kill it with
 * SIGKILL in the middle of a batch. Each append is slowed down so the kill lands mid-batch.
 */
import { openPostgres } from '../../src/db/postgres.ts';
import type { EventStore } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { runKafkaIngestion } from '../../src/kafka/ingestion-worker.ts';
import type { Topics } from '../../src/kafka/topics.ts';
import { TEST_DATABASE_URL } from '../support/db.ts';
import { silentLog } from './support.ts';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const db = openPostgres({ connectionString: TEST_DATABASE_URL, schema: env('EARSHOT_TEST_SCHEMA'), max: 4 });
const real = createPostgresEventStore(db);
const appendDelayMs = Number(process.env.EARSHOT_TEST_APPEND_DELAY_MS ?? 20);
const store: EventStore = {
  ...real,
  async append(...args) {
    await new Promise((resolve) => setTimeout(resolve, appendDelayMs));
    return real.append(...args);
  },
};

process.stdout.write('started\n');
await runKafkaIngestion(
  {
    brokers: env('KAFKA_BROKERS').split(','),
    store,
    log: silentLog,
    topics: JSON.parse(env('EARSHOT_TEST_TOPICS')) as Topics,
    groupId: env('EARSHOT_TEST_GROUP'),
    chunkSize: 5,
    appendConcurrency: 1,
    sessionTimeoutMs: 6000,
  },
  new AbortController().signal,
);
