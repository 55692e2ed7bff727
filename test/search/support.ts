import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import { embedder } from '../../consumers/embedder/embedder.ts';
import { catalogEpisodesProjection } from '../../projections/catalog-episodes/projection.ts';
import { clipsProjection } from '../../projections/clips/projection.ts';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { podcastsProjection } from '../../projections/podcasts/projection.ts';
import { segmentsProjection } from '../../projections/segments/projection.ts';
import { transcriptsProjection } from '../../projections/transcripts/projection.ts';
import type { Db } from '../../src/db/db.ts';
import type { EventStore } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import type { IngestEvent } from '../../src/ingestion/events.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { searchCapability } from '../../src/search/capability.ts';
import { searchesInFlight } from '../../src/search/in-flight.ts';
import type { EmbeddingProvider } from '../../src/search/semantic/provider.ts';
import { catchUpSubscription } from '../../src/subscriptions/runner.ts';
import { createDb, type Engine } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';
import { catchUp } from '../support/projections.ts';

const NOW = new Date('2026-11-20T12:00:00Z');

/** The read models the search routes read besides their own. */
const READ_MODELS = [
  entitiesProjection,
  podcastsProjection,
  catalogEpisodesProjection,
  transcriptsProjection,
  segmentsProjection,
  clipsProjection,
];

export interface SearchHarness {
  db: Db;
  store: EventStore;
  app: FastifyInstance;
  /** Ingests the events and applies them to every projection, or only to those of `only`. */
  ingest(events: IngestEvent[], only?: string[]): Promise<void>;
  get(url: string, query?: Record<string, string>): Promise<LightMyRequestResponse>;
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are read as loose JSON
  json(url: string, query?: Record<string, string>): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/**
 * A migrated database, the search routes and every projection they read; `now` is fixed at NOW.
 * With a `provider`, semantic search uses it and ingesting also runs the embedder.
 */
export async function searchHarness(
  engine: Engine,
  provider?: EmbeddingProvider,
  options: { statementTimeoutMs?: number; concurrency?: number } = {},
): Promise<SearchHarness> {
  const { db, drop } = await createDb(engine);
  const store: EventStore = createPostgresEventStore(db);
  const capability = searchCapability(
    {
      now: () => NOW,
      ...(options.statementTimeoutMs === undefined ? {} : { statementTimeoutMs: options.statementTimeoutMs }),
      ...(options.concurrency === undefined ? {} : { inSlot: searchesInFlight(options.concurrency) }),
    },
    provider && { runtime: { db, store, log: pino({ level: 'silent' }) }, provider },
  );
  const app = await buildHttpApp({ db, cursorKey: Buffer.alloc(32, 5), routes: capability.routes ?? [] });
  const { headers } = await createTenant(db);
  const get = (url: string, query: Record<string, string> = {}) => app.inject({ url, query, headers });
  return {
    db,
    store,
    app,
    async ingest(events, only) {
      await ingestEvents(store, events);
      for (const projection of [...READ_MODELS, ...(capability.projections ?? [])])
        if (only === undefined || only.includes(projection.name)) await catchUp(db, store, projection);
      if (provider)
        await catchUpSubscription(db, store, embedder(provider), { retries: 1, retryDelayMs: 10 });
    },
    get,
    async json(url, query) {
      const response = await get(url, query);
      return { status: response.statusCode, body: response.json() };
    },
    async close() {
      await app.close();
      await store.close();
      await drop();
    },
  };
}
