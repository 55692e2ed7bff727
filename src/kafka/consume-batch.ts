import type { IHeaders } from 'kafkajs';
import type { Logger } from 'pino';
import { type BackoffOptions, retry } from '../retry.ts';
import { type IngestMessagesDeps, type IngestMessagesResult, ingestMessages } from './ingest-messages.ts';
import type { SourceMessage } from './messages.ts';

/** The part of kafkajs's EachBatchPayload this module uses (it satisfies this interface as is). */
export interface BatchControl {
  batch: {
    topic: string;
    partition: number;
    messages: ReadonlyArray<{
      offset: string;
      key: Buffer | null;
      value: Buffer | null;
      headers?: IHeaders;
      timestamp: string;
    }>;
  };
  resolveOffset(offset: string): void;
  heartbeat(): Promise<void>;
  commitOffsetsIfNecessary(): Promise<void>;
  isRunning(): boolean;
  isStale(): boolean;
}

export interface ConsumeBatchOptions extends IngestMessagesDeps {
  signal: AbortSignal;
  log: Logger;
  /** Messages stored (and then committed) together. Default 100. */
  chunkSize?: number;
  /** Delays between attempts while the event store or the dead-letter topic fails. */
  backoff?: BackoffOptions;
  /** How often to heartbeat while a chunk is being stored or retried, in ms. Default 3000. */
  heartbeatEveryMs?: number;
  /** Called after each chunk is durable and its offsets resolved. */
  onChunk?(chunk: IngestMessagesResult & { topic: string; partition: number; lastOffset: string }): void;
}

export function chunksOf<T>(items: readonly T[], size: number): T[][] {
  if (!(Number.isInteger(size) && size > 0))
    throw new RangeError(`chunk size must be a positive integer, got ${size}`);
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}

/** Runs `work`, heartbeating meanwhile so a slow store does not cost the group membership. */
async function whileHeartbeating<T>(
  control: BatchControl,
  everyMs: number,
  work: () => Promise<T>,
): Promise<T> {
  // A heartbeat failing here (a rebalance) is ignored: the explicit heartbeat after the work reports it.
  const timer = setInterval(() => control.heartbeat().catch(() => {}), everyMs);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/**
 * The eachBatch handler: stores the batch chunk by chunk and resolves a chunk's offsets only once
 * its events are appended and its dead letters written, then lets kafkajs commit them. While the
 * store or the dead-letter topic fails, the same chunk is retried with backoff (the partition waits,
 * heartbeating, so order is kept and nothing is committed). It returns early, leaving the rest
 * unresolved for redelivery, when the consumer stops, the partition is revoked or the signal aborts.
 */
export async function consumeBatch(control: BatchControl, options: ConsumeBatchOptions): Promise<void> {
  const { topic, partition, messages } = control.batch;
  const everyMs = options.heartbeatEveryMs ?? 3000;
  const active = () => control.isRunning() && !control.isStale() && !options.signal.aborted;
  for (const chunk of chunksOf(messages, options.chunkSize ?? 100)) {
    if (!active()) return;
    const sources: SourceMessage[] = chunk.map((message) => ({
      topic,
      partition,
      offset: message.offset,
      key: message.key,
      value: message.value,
      headers: message.headers,
      timestamp: message.timestamp,
    }));
    // Heartbeating through the retries' waits too, so a down store does not cost the partitions.
    const result = await whileHeartbeating(control, everyMs, () =>
      retry(() => ingestMessages(sources, options), {
        signal: options.signal,
        ...(options.backoff && { backoff: options.backoff }),
        shouldRetry: active,
        onFailedAttempt: (error, attempt) => {
          if (!active()) return;
          options.log.error(
            { err: error, topic, partition, firstOffset: chunk[0]!.offset, attempt },
            'could not store consumed messages; retrying them, their offsets stay uncommitted',
          );
        },
      }).catch((error: unknown) => {
        if (active()) throw error;
        return undefined;
      }),
    );
    if (!result) return;
    const lastOffset = chunk.at(-1)!.offset;
    control.resolveOffset(lastOffset);
    if (result.deadLettered > 0) {
      options.log.warn(
        { topic, partition, firstOffset: chunk[0]!.offset, lastOffset, deadLettered: result.deadLettered },
        'invalid messages moved to the dead-letter topic',
      );
    }
    options.onChunk?.({ ...result, topic, partition, lastOffset });
    await control.commitOffsetsIfNecessary();
    await control.heartbeat();
  }
}
