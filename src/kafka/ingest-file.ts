import type { Message } from 'kafkajs';
import type { Logger } from 'pino';
import type { ErrorDetail } from '../errors.ts';
import { createKafka } from './client.ts';
import { readEventLines } from './file-events.ts';
import { createDurableProducer } from './ingestion-worker.ts';
import { encodeEvent } from './messages.ts';
import { ensureTopics, TOPICS, type Topics } from './topics.ts';

export interface IngestFileHooks {
  onProgress?(doneBytes: number, totalBytes: number): void;
  onRejected?(line: number, problems: ErrorDetail[]): void;
}

export interface IngestFileViaKafkaOptions {
  topics?: Topics;
  clientId?: string;
  log?: Logger;
  /** Messages per produce request. Default 500. */
  batchSize?: number;
}

/**
 * `earshot ingest FILE --via kafka`: validates each line as `ingestFile` does and produces the valid
 * events to their topics (keyed by episode or entity id), acknowledged by all in-sync replicas.
 * Invalid lines are reported and counted, never produced. `accepted` counts produced events;
 * duplicates are only known once the consumer appends them, so it is always 0 here.
 */
export async function ingestFileViaKafka(
  brokers: readonly string[],
  file: string,
  hooks: IngestFileHooks = {},
  options: IngestFileViaKafkaOptions = {},
): Promise<{ accepted: number; duplicates: number; rejected: number }> {
  const topics = options.topics ?? TOPICS;
  const batchSize = options.batchSize ?? 500;
  const source = readEventLines(file);
  const kafka = createKafka(brokers, {
    clientId: options.clientId ?? 'earshot-cli',
    ...(options.log ? { log: options.log } : {}),
  });
  const admin = kafka.admin();
  const producer = createDurableProducer(kafka);
  const result = { accepted: 0, duplicates: 0, rejected: 0 };
  try {
    try {
      await admin.connect();
      await ensureTopics(admin, topics);
      await producer.connect();
    } catch (error) {
      throw new Error(`could not reach Kafka at ${brokers.join(',')}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    let batch: Array<{ topic: string; message: Message }> = [];
    const flush = async () => {
      const byTopic = new Map<string, Message[]>();
      for (const { topic, message } of batch) {
        const messages = byTopic.get(topic);
        if (messages) messages.push(message);
        else byTopic.set(topic, [message]);
      }
      await producer.sendBatch({
        topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
        acks: -1,
      });
      result.accepted += batch.length;
      batch = [];
      hooks.onProgress?.(source.bytesRead(), source.totalBytes);
    };
    for await (const line of source.lines) {
      if (!line.ok) {
        result.rejected++;
        hooks.onRejected?.(line.lineNumber, line.errors);
        continue;
      }
      batch.push(encodeEvent(line.event, topics, line.text));
      if (batch.length >= batchSize) await flush();
    }
    if (batch.length) await flush();
    hooks.onProgress?.(source.totalBytes, source.totalBytes);
    return result;
  } finally {
    source.close();
    await producer.disconnect().catch(() => {});
    await admin.disconnect().catch(() => {});
  }
}
