import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
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
  app: FastifyInstance;
  /** Ingests the events and applies them to every projection, or only to those of `only`. */
  ingest(events: IngestEvent[], only?: string[]): Promise<void>;
  get(url: string, query?: Record<string, string>): Promise<LightMyRequestResponse>;
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are read as loose JSON
  json(url: string, query?: Record<string, string>): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/** A migrated database, the search routes and every projection they read; `now` is fixed at NOW. */
export async function searchHarness(engine: Engine): Promise<SearchHarness> {
  const { db, drop } = await createDb(engine);
  const store: EventStore = createPostgresEventStore(db);
  const capability = searchCapability({ now: () => NOW });
  const app = await buildHttpApp({ db, cursorKey: Buffer.alloc(32, 5), routes: capability.routes ?? [] });
  const { headers } = await createTenant(db);
  const get = (url: string, query: Record<string, string> = {}) => app.inject({ url, query, headers });
  return {
    db,
    app,
    async ingest(events, only) {
      await ingestEvents(store, events);
      for (const projection of [...READ_MODELS, ...(capability.projections ?? [])])
        if (only === undefined || only.includes(projection.name)) await catchUp(db, store, projection);
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
