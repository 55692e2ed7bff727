import { createServer } from 'node:net';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { CONSUMER_GROUP, kafkaIngestionWorker, runKafkaIngestion } from '../../src/kafka/ingestion-worker.ts';
import type { Runtime } from '../../src/runtime.ts';
import { silentLog } from './support.ts';

/** A loopback port nothing listens on: every connection is refused, as with a broker that is down. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const runtime = (env: Record<string, string>) =>
  ({ config: loadConfig(env), store: {}, log: silentLog, now: () => new Date() }) as unknown as Runtime;

describe('kafkaIngestionWorker', () => {
  it('runs in the matcher role, as a member of the earshot-ingest group', () => {
    const worker = kafkaIngestionWorker(runtime({ KAFKA_BROKERS: '127.0.0.1:9092' }));
    expect({ name: worker.name, role: worker.role }).toEqual({ name: 'kafka-ingestion', role: 'matcher' });
    expect(CONSUMER_GROUP).toBe('earshot-ingest');
  });

  it('refuses to be built without brokers', () => {
    expect(() => kafkaIngestionWorker(runtime({}))).toThrow(/KAFKA_BROKERS/);
  });
});

describe('runKafkaIngestion', () => {
  it('keeps trying while no broker answers, logging why, and stops at once when aborted', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const controller = new AbortController();
    const run = runKafkaIngestion(
      {
        brokers: [`127.0.0.1:${await closedPort()}`],
        store: {} as never,
        log,
        backoff: { initialMs: 10, maxMs: 50 },
      },
      controller.signal,
    );
    await new Promise((resolve) => setTimeout(resolve, 800));
    const abortedAt = Date.now();
    controller.abort();
    await run;
    expect(Date.now() - abortedAt).toBeLessThan(2000);
    expect(lines.some((line) => line.includes('ECONNREFUSED'))).toBe(true);
  });
});
