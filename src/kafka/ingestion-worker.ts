import type { Consumer, ConsumerCrashEvent, Producer } from 'kafkajs';
import { Partitioners } from 'kafkajs';
import type { Logger } from 'pino';
import type { EventStore } from '../eventstore/port.ts';
import { type Metrics, metrics as processMetrics } from '../observability/metrics.ts';
import type { Runtime, Worker } from '../runtime.ts';
import { type BackoffOptions, backoffDelay, pause } from './backoff.ts';
import { createKafka } from './client.ts';
import { type ConsumeBatchOptions, consumeBatch } from './consume-batch.ts';
import { ensureTopics, producerTopics, TOPICS, type Topics } from './topics.ts';

export const CONSUMER_GROUP = 'earshot-ingest';

const STOPPED = Symbol('stopped');

export interface KafkaIngestionOptions {
  brokers: readonly string[];
  store: EventStore;
  log: Logger;
  now?: () => Date;
  topics?: Topics;
  /** Default `earshot-ingest`. */
  groupId?: string;
  clientId?: string;
  /** Messages stored and committed together. Default 100. */
  chunkSize?: number;
  /** Streams appended at the same time within a chunk. Default 8. */
  appendConcurrency?: number;
  /** Backoff while storing fails, and between restarts of the consumer. */
  backoff?: BackoffOptions;
  /** The group forgets a silent member after this long, in ms. Default 30 000. */
  sessionTimeoutMs?: number;
  onChunk?: ConsumeBatchOptions['onChunk'];
  /** Counts into `earshot_ingest_events_total{transport="kafka"}`. Default: the process registry. */
  metrics?: Metrics;
}

/** The producer that writes dead letters: idempotent, so its own retries never write one twice. */
export function createDurableProducer(kafka: ReturnType<typeof createKafka>): Producer {
  return kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: false,
  });
}

/**
 * Moves producer events from the Kafka topics into the event store until the signal aborts: one
 * member of the `earshot-ingest` consumer group. Offsets are committed only for messages whose events
 * are appended (or whose dead letters are written), so delivery is at least once and the event store's
 * idempotent append makes a redelivery a no-op. When the consumer cannot start or crashes for good, it
 * is started again after a backoff; on abort, the chunk in flight finishes and the member leaves the group.
 */
export async function runKafkaIngestion(options: KafkaIngestionOptions, signal: AbortSignal): Promise<void> {
  const topics = options.topics ?? TOPICS;
  const groupId = options.groupId ?? CONSUMER_GROUP;
  const log = options.log.child({ component: 'kafka-ingestion', groupId });
  const kafka = createKafka(options.brokers, { clientId: options.clientId ?? 'earshot-ingest', log });
  const counter = (options.metrics ?? processMetrics).ingestEvents;
  const onChunk: NonNullable<ConsumeBatchOptions['onChunk']> = (chunk) => {
    counter.inc({ result: 'accepted', transport: 'kafka' }, chunk.appended);
    counter.inc({ result: 'duplicate', transport: 'kafka' }, chunk.duplicates);
    counter.inc({ result: 'rejected', transport: 'kafka' }, chunk.deadLettered);
    options.onChunk?.(chunk);
  };

  let failuresInARow = 0;
  while (!signal.aborted) {
    const admin = kafka.admin();
    const producer = createDurableProducer(kafka);
    const consumer: Consumer = kafka.consumer({
      groupId,
      sessionTimeout: options.sessionTimeoutMs ?? 30_000,
      heartbeatInterval: Math.floor((options.sessionTimeoutMs ?? 30_000) / 10),
      allowAutoTopicCreation: false,
    });
    let crashed: (error: Error) => void = () => {};
    const crash = new Promise<Error>((resolve) => {
      crashed = resolve;
    });
    // kafkajs restarts itself after a retriable crash; after any other it stays stopped, and so would we.
    consumer.on(consumer.events.CRASH, (event: ConsumerCrashEvent) => {
      if (!event.payload.restart) crashed(event.payload.error);
    });
    const stopped = new Promise<typeof STOPPED>((resolve) =>
      signal.addEventListener('abort', () => resolve(STOPPED), { once: true }),
    );
    // kafkajs retries a connection for about ten seconds before it gives up; a stop should not wait for that.
    const step = async <T>(work: Promise<T>): Promise<T> => {
      const outcome = await Promise.race([work, stopped]);
      if (outcome === STOPPED) {
        work.catch(() => {});
        throw STOPPED;
      }
      return outcome as T;
    };
    let failure: unknown;
    try {
      await step(admin.connect());
      const created = await step(ensureTopics(admin, topics));
      if (created.length) log.info({ topics: created }, 'created missing topics');
      await admin.disconnect();
      await step(producer.connect());
      await step(consumer.connect());
      await step(consumer.subscribe({ topics: producerTopics(topics), fromBeginning: true }));
      await step(
        consumer.run({
          eachBatchAutoResolve: false,
          autoCommit: true,
          autoCommitThreshold: 1,
          eachBatch: (payload) =>
            consumeBatch(payload, {
              store: options.store,
              topics,
              now: options.now ?? (() => new Date()),
              sendDeadLetters: async (messages) => {
                await producer.send({ topic: topics.deadLetter, messages, acks: -1 });
              },
              signal,
              log,
              ...(options.chunkSize === undefined ? {} : { chunkSize: options.chunkSize }),
              ...(options.appendConcurrency === undefined
                ? {}
                : { appendConcurrency: options.appendConcurrency }),
              ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
              onChunk,
            }),
        }),
      );
      log.info({ topics: producerTopics(topics) }, 'consuming');
      failuresInARow = 0;
      const outcome = await Promise.race([stopped, crash]);
      if (outcome !== STOPPED) failure = outcome;
    } catch (error) {
      if (error !== STOPPED) failure = error;
    } finally {
      // disconnect waits for the batch in flight, which stops after its current chunk.
      await consumer
        .disconnect()
        .catch((error: unknown) => log.warn({ err: error }, 'consumer disconnect failed'));
      await producer
        .disconnect()
        .catch((error: unknown) => log.warn({ err: error }, 'producer disconnect failed'));
      await admin.disconnect().catch(() => {});
    }
    if (failure === undefined || signal.aborted) break;
    const delay = backoffDelay(failuresInARow++, options.backoff);
    log.error({ err: failure, retryInMs: delay }, 'kafka ingestion stopped; starting it again');
    await pause(delay, signal);
  }
}

/** The worker that runs Kafka ingestion in `earshot serve` (role matcher) when KAFKA_BROKERS is set. */
export function kafkaIngestionWorker(runtime: Runtime, options: Partial<KafkaIngestionOptions> = {}): Worker {
  const brokers = options.brokers ?? runtime.config.kafkaBrokers;
  if (!brokers?.length) throw new Error('kafkaIngestionWorker needs KAFKA_BROKERS');
  return {
    name: 'kafka-ingestion',
    role: 'matcher',
    run: (signal) =>
      runKafkaIngestion(
        { store: runtime.store, log: runtime.log, now: runtime.now, ...options, brokers },
        signal,
      ),
  };
}
