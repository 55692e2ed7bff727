import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresEventStore, type PostgresEventStore } from '../../src/eventstore/postgres.ts';
import { causedBy, withCorrelation } from '../../src/observability/correlation.ts';
import { createTestDb, type TestDb } from '../support/db.ts';

/** A pino logger writing JSON lines into memory. */
function memoryLogger() {
  const lines: Record<string, unknown>[] = [];
  const log = pino(
    { base: { service: 'earshot' } },
    { write: (line: string) => lines.push(JSON.parse(line)) },
  );
  return { log, lines };
}

describe('correlation ids', () => {
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

  it('carries the ingestion event id from the ingested event to a delivery two steps downstream', async () => {
    await store.append('episode-1', [{ id: 'ingest-1', type: 'EpisodeTranscribed', data: {} }], {
      correlationId: 'ingest-1',
    });
    const [ingested] = await store.readStream('episode-1');
    await store.append('alert-1', [{ id: 'match-1', type: 'AlertMatched', data: {} }], causedBy(ingested!));
    const [matched] = await store.readStream('alert-1');
    await store.append(
      'delivery-1',
      [{ id: 'delivery-1', type: 'DeliverySucceeded', data: {} }],
      causedBy(matched!),
    );
    const [delivered] = await store.readStream('delivery-1');

    expect(matched!.metadata).toMatchObject({ correlationId: 'ingest-1', causationId: 'ingest-1' });
    expect(delivered!.metadata).toMatchObject({ correlationId: 'ingest-1', causationId: 'match-1' });

    const { log, lines } = memoryLogger();
    withCorrelation(log, delivered!.metadata, { channel: 'webhook' }).info('delivered');
    expect(lines).toEqual([
      expect.objectContaining({
        msg: 'delivered',
        service: 'earshot',
        channel: 'webhook',
        correlationId: 'ingest-1',
        causationId: 'match-1',
      }),
    ]);
  });

  it('starts a correlation at an event that carries none', () => {
    expect(causedBy({ id: 'evt-9', metadata: {} })).toEqual({ correlationId: 'evt-9', causationId: 'evt-9' });
  });

  it('logs no correlation fields when the metadata has none', () => {
    const { log, lines } = memoryLogger();
    withCorrelation(log, {}).info('plain');
    withCorrelation(log, undefined).info('plain');
    expect(lines.every((line) => !('correlationId' in line) && !('causationId' in line))).toBe(true);
    expect(lines).toHaveLength(2);
  });
});
