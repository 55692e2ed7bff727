import { randomUUID } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { catalogCapability, catalogProjections } from '../../src/catalog/capability.ts';
import type { Db } from '../../src/db/db.ts';
import type { EventStore } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import type { PodcastUpserted } from '../../src/ingestion/catalog-events.ts';
import type { EpisodeTranscribed, IngestEvent } from '../../src/ingestion/events.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { createDb, type Engine } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';
import { catchUp } from '../support/projections.ts';

export const NOW = new Date('2026-11-20T12:00:00Z');

export interface CatalogHarness {
  db: Db;
  store: EventStore;
  app: FastifyInstance;
  headers: Record<string, string>;
  ingest(events: IngestEvent[]): Promise<void>;
  get(url: string, query?: Record<string, string>): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/**
 * A migrated database (its sessions in `timeZone` when given), an event store, the catalog's routes
 * and a project key; `now` is fixed at NOW.
 */
export async function catalogHarness(
  engine: Engine,
  now: () => Date = () => NOW,
  timeZone?: string,
): Promise<CatalogHarness> {
  const { db, drop } = await createDb(engine, timeZone ? { timeZone } : {});
  const store = createPostgresEventStore(db);
  const capability = catalogCapability({ now });
  const app = await buildHttpApp({ db, cursorKey: Buffer.alloc(32, 3), routes: capability.routes ?? [] });
  const { headers } = await createTenant(db);
  return {
    db,
    store,
    app,
    headers,
    async ingest(events) {
      for (let i = 0; i < events.length; i += 500) await ingestEvents(store, events.slice(i, i + 500));
      for (const projection of [entitiesProjection, ...catalogProjections])
        await catchUp(db, store, projection);
    },
    get: (url, query = {}) => app.inject({ url, query, headers }),
    async close() {
      await app.close();
      await store.close();
      await drop();
    },
  };
}

export function podcastEvent(
  podcast: Partial<PodcastUpserted['podcast']> & { id: string; title: string },
  occurredAt = '2026-11-20T10:00:00Z',
): PodcastUpserted {
  return { type: 'podcast.upserted', event_id: randomUUID(), occurred_at: occurredAt, podcast };
}

export interface EpisodeSpec {
  id: string;
  podcastId: string;
  podcastTitle?: string;
  title?: string;
  publishedAt?: string;
  durationSeconds?: number;
  occurredAt?: string;
  /** Speaker roles; one transcript line each. No roles means no transcript. */
  roles?: string[];
  ads?: number;
  videos?: number;
  topics?: EpisodeTranscribed['episode']['topics'];
  extra?: Partial<EpisodeTranscribed>;
  episode?: Partial<EpisodeTranscribed['episode']>;
}

/** An episode whose speakers have the given roles, each saying one line. */
export function episodeOf(spec: EpisodeSpec): EpisodeTranscribed {
  const roles = spec.roles ?? [];
  return {
    type: 'episode.transcribed',
    event_id: randomUUID(),
    occurred_at: spec.occurredAt ?? '2026-11-20T10:00:00Z',
    podcast: { id: spec.podcastId, title: spec.podcastTitle ?? `Show ${spec.podcastId}` },
    episode: {
      id: spec.id,
      title: spec.title ?? `Episode ${spec.id}`,
      published_at: spec.publishedAt ?? '2026-11-18T06:00:00Z',
      duration_seconds: spec.durationSeconds ?? 3600,
      ...(spec.topics ? { topics: spec.topics } : {}),
      ...(spec.videos
        ? {
            videos: Array.from({ length: spec.videos }, (_, i) => ({
              url: `https://v.example/${spec.id}/${i}`,
            })),
          }
        : {}),
      ...spec.episode,
    },
    speakers: roles.map((role, i) => ({ id: `${spec.id}-s${i}`, name: `Speaker ${i}`, role })),
    ...(roles.length
      ? {
          transcript: {
            language: 'en',
            lines: roles.map((_, i) => ({
              number: i + 1,
              speaker_id: `${spec.id}-s${i}`,
              start_seconds: i * 10,
              end_seconds: i * 10 + 9,
              text: `Line ${i + 1} of ${spec.id}.`,
            })),
          },
        }
      : {}),
    ...(spec.ads
      ? {
          ads: Array.from({ length: spec.ads }, (_, i) => ({
            id: `${spec.id}-ad${i}`,
            sponsor: { name: `Sponsor ${i}` },
          })),
        }
      : {}),
    ...spec.extra,
  };
}
