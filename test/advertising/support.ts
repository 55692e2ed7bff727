import { randomUUID } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { advertisingCapability } from '../../src/advertising/capability.ts';
import { advertisingPodcastExtras } from '../../src/advertising/podcast-extras.ts';
import { catalogCapability } from '../../src/catalog/capability.ts';
import type { Db } from '../../src/db/db.ts';
import type { EventStore } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import type { EpisodeAd } from '../../src/ingestion/catalog-events.ts';
import type { EpisodeTranscribed, IngestEvent } from '../../src/ingestion/events.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import type { Plan } from '../../src/platform/organizations.ts';
import { createTestDb } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';
import { catchUp } from '../support/projections.ts';

export interface AdvertisingHarness {
  db: Db;
  store: EventStore;
  app: FastifyInstance;
  clock: { now: Date };
  headers: Record<string, string>;
  keyOf(plan: Plan): Promise<Record<string, string>>;
  ingest(events: IngestEvent[]): Promise<void>;
  get(
    url: string,
    query?: Record<string, string>,
    headers?: Record<string, string>,
  ): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** A migrated PostgreSQL schema, the catalog and advertising routes, a BUSINESS key and a settable clock. */
export async function advertisingHarness(
  now = new Date('2026-11-20T12:00:00Z'),
): Promise<AdvertisingHarness> {
  const { db, drop } = await createTestDb();
  const store = createPostgresEventStore(db);
  const clock = { now };
  const catalog = catalogCapability({
    now: () => clock.now,
    podcastExtras: advertisingPodcastExtras,
  });
  const advertising = advertisingCapability({ now: () => clock.now });
  const app = await buildHttpApp({
    db,
    cursorKey: Buffer.alloc(32, 5),
    routes: [...(catalog.routes ?? []), ...(advertising.routes ?? [])],
  });
  const { headers } = await createTenant(db, 'BUSINESS');
  const projections = [
    entitiesProjection,
    ...(catalog.projections ?? []),
    ...(advertising.projections ?? []),
  ];
  return {
    db,
    store,
    app,
    clock,
    headers,
    keyOf: async (plan) => (await createTenant(db, plan)).headers,
    async ingest(events) {
      for (let i = 0; i < events.length; i += 500) await ingestEvents(store, events.slice(i, i + 500));
      for (const projection of projections) await catchUp(db, store, projection);
    },
    get: (url, query = {}, given = headers) => app.inject({ url, query, headers: given }),
    async close() {
      await app.close();
      await store.close();
      await drop();
    },
  };
}

export interface AdSpec {
  sponsor: string;
  name?: string;
  company?: string;
  read?: 'HOST_READ' | 'PRE_RECORDED';
  placement?: 'PRE_ROLL' | 'MID_ROLL' | 'POST_ROLL';
  promo?: boolean;
}

/** An episode of a show with the given ads, guests (person ids) and topics. */
export function episodeWith(spec: {
  id: string;
  podcast: string;
  publishedAt: string;
  ads?: AdSpec[];
  guests?: string[];
  topics?: string[];
  publisher?: string;
  occurredAt?: string;
}): EpisodeTranscribed {
  return {
    type: 'episode.transcribed',
    event_id: randomUUID(),
    occurred_at: spec.occurredAt ?? '2026-11-20T10:00:00Z',
    podcast: {
      id: spec.podcast,
      title: `Show ${spec.podcast}`,
      ...(spec.publisher
        ? {
            publisher: {
              id: spec.publisher,
              name: `Publisher ${spec.publisher}`,
              slug: `${spec.publisher}-slug`,
            },
          }
        : {}),
    },
    episode: {
      id: spec.id,
      title: `Episode ${spec.id}`,
      published_at: spec.publishedAt,
      duration_seconds: 3600,
      ...(spec.topics
        ? {
            topics: spec.topics.map((t) => ({
              id: t,
              name: `Topic ${t}`,
              slug: t,
              ancestry: `root-${t[0]}/${t}`,
            })),
          }
        : {}),
    },
    speakers: [
      { id: `${spec.id}-host`, name: 'Host', role: 'HOST', person_id: `host-${spec.podcast}` },
      ...(spec.guests ?? []).map((g, i) => ({
        id: `${spec.id}-g${i}`,
        name: `Guest ${g}`,
        role: 'GUEST',
        person_id: g,
      })),
    ],
    ads: (spec.ads ?? []).map(
      (a, i): EpisodeAd => ({
        id: `${spec.id}-ad${i}`,
        sponsor: {
          id: a.sponsor,
          name: a.name ?? `Sponsor ${a.sponsor}`,
          ...(a.company ? { company_id: a.company } : {}),
        },
        start_seconds: i * 60,
        end_seconds: i * 60 + 30,
        ...(a.read ? { read_type: a.read } : {}),
        ...(a.placement ? { placement_type: a.placement } : {}),
        ...(a.promo ? { is_network_promo: true } : {}),
      }),
    ),
  };
}
