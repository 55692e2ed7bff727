import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { type MatcherStats, realtimeMatcher } from '../../consumers/matcher/realtime.ts';
import type { AlertEvent } from '../../src/alerts/alert.ts';
import type { Db } from '../../src/db/db.ts';
import { migrate } from '../../src/db/migrate.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { comparePositions, START } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { entityStream, storedEventId } from '../../src/ingestion/events.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { readConsumerCheckpoint, runConsumer } from '../../src/matching/consumer.ts';
import type { EpisodeTranscribed, WatchedAlert } from '../../src/matching/types.ts';
import type { SyntheticEntity } from './synthetic.ts';

const DATABASE_URL =
  process.env.BENCH_DATABASE_URL ??
  process.env.TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/test';

const PRODUCERS = Number(process.env.PIPELINE_PRODUCERS ?? 4);

export interface PipelineResult {
  episodes: number;
  seconds: number;
  episodesPerSecond: number;
  matchesAppended: number;
  ingestSeconds: number;
  setupSeconds: number;
  firstStartSeconds: number;
  restartSeconds: number;
}

/** Bench setup only: stores many first events of new streams in one statement (not the measured path). */
async function bulkStore(db: Db, rows: { s: string; id: string; t: string; d: unknown }[]) {
  for (let i = 0; i < rows.length; i += 2000) {
    await db.query(
      `with input as (
         select j->>'s' as stream_id, j->>'id' as event_id, j->>'t' as type, j->'d' as data
           from jsonb_array_elements($1::jsonb) j),
       new_streams as (
         insert into streams (stream_id, revision, transaction_id)
         select stream_id, 0, pg_current_xact_id() from input)
       insert into events (stream_id, stream_revision, event_id, type, data, metadata)
       select stream_id, 0, event_id, type, data, '{}' from input`,
      [JSON.stringify(rows.slice(i, i + 2000))],
    );
  }
}

function alertCreated(alert: WatchedAlert): Extract<AlertEvent, { type: 'AlertCreated' }>['data'] {
  const { languages, relevance, source_popularity, speaker_roles } = alert.filters;
  return {
    alertId: alert.alertId,
    projectId: alert.projectId,
    organizationId: alert.organizationId,
    title: alert.alertId,
    description: null,
    kind: alert.kind,
    deliveryCadence: 'REALTIME',
    entity: { entityType: alert.entityType, entityId: alert.entityId },
    notifications: [],
    filters: {
      ...(languages ? { languages: [...languages] } : {}),
      ...(relevance ? { relevance } : {}),
      ...(source_popularity ? { sourcePopularity: [...source_popularity] } : {}),
      ...(speaker_roles ? { speakerRoles: [...speaker_roles] as never } : {}),
    },
    disableTokens: [],
    createdAt: '2026-11-20T00:00:00.000Z',
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function head(db: Db): Promise<string> {
  const { rows } = await db.query<{ head: string }>(
    `select transaction_id::text || '/' || global_position as head
       from events order by transaction_id desc, global_position desc limit 1`,
  );
  return rows[0]?.head ?? START;
}

async function waitForCheckpoint(db: Db, target: string) {
  while (comparePositions(await readConsumerCheckpoint(db, { name: 'matcher' }), target) < 0) await pause(5);
}

/**
 * The whole pipeline on PostgreSQL in a schema of its own: entities and alerts stored as events,
 * the realtime matcher running as in the server; then `rounds` × the episodes are ingested through
 * the ingestion entry while it runs. Measured: from the first ingest until the matcher's
 * checkpoint has passed the last episode, every match appended. Ingestion runs PIPELINE_PRODUCERS
 * (default 4) producers at once.
 */
export async function measurePipeline(
  entities: readonly SyntheticEntity[],
  alerts: readonly WatchedAlert[],
  episodes: readonly EpisodeTranscribed[],
  rounds: number,
): Promise<PipelineResult> {
  const schema = `bench_${randomBytes(5).toString('hex')}`;
  const admin = openPostgres({ connectionString: DATABASE_URL, max: 1 });
  await admin.query(`create schema ${schema}`);
  const db = openPostgres({ connectionString: DATABASE_URL, schema, max: 24 });
  const store = createPostgresEventStore(db, { pollIntervalMs: 20 });
  const controller = new AbortController();
  let running: Promise<void> | undefined;
  try {
    await migrate(db);
    let started = performance.now();
    await bulkStore(
      db,
      entities.map((entity) => {
        const event = {
          type: 'entity.upserted',
          event_id: `bench-entity-${entity.id}`,
          occurred_at: '2026-11-01T00:00:00Z',
          entity: {
            id: entity.id,
            slug: entity.id,
            name: entity.name,
            entity_type: entity.type,
            aliases: entity.aliases,
          },
        };
        return {
          s: entityStream(entity.id),
          id: storedEventId(event.event_id),
          t: 'EntityUpserted',
          d: event,
        };
      }),
    );
    await bulkStore(
      db,
      alerts.map((alert) => ({
        s: `alert-${alert.alertId}`,
        id: `created-${alert.alertId}`,
        t: 'AlertCreated',
        d: alertCreated(alert),
      })),
    );
    const setupSeconds = (performance.now() - started) / 1000;

    const log = pino({ level: 'silent' });
    const stats: MatcherStats = { episodes: 0, appended: 0, duplicates: 0 };
    const deps = { db, store, log, now: () => new Date() };
    started = performance.now();
    running = runConsumer(db, store, realtimeMatcher(deps, stats), {
      signal: controller.signal,
      onError: (error) => console.error('matcher batch failed', error),
    });
    await waitForCheckpoint(db, await head(db));
    const firstStartSeconds = (performance.now() - started) / 1000;

    const batch = Array.from({ length: rounds }, (_, round) =>
      episodes.map((episode, i) => ({
        ...episode,
        event_id: `bench-${round}-${i}`,
        episode: { ...episode.episode, id: `bench-episode-${round}-${i}` },
      })),
    ).flat();
    started = performance.now();
    // Several producers post at once, as they would to the ingestion entry or from Kafka partitions.
    let next = 0;
    await Promise.all(
      Array.from({ length: PRODUCERS }, async () => {
        while (next < batch.length) await ingestEvents(store, [batch[next++]!]);
      }),
    );
    const ingestSeconds = (performance.now() - started) / 1000;
    await waitForCheckpoint(db, await head(db));
    const seconds = (performance.now() - started) / 1000;
    controller.abort();
    await running;
    running = undefined;

    // A restart rebuilds the watchlist from the alert and entity events up to the checkpoint.
    const checkpoint = await readConsumerCheckpoint(db, { name: 'matcher' });
    started = performance.now();
    await realtimeMatcher(deps).start?.(checkpoint, new AbortController().signal);
    const restartSeconds = (performance.now() - started) / 1000;

    return {
      episodes: batch.length,
      seconds,
      episodesPerSecond: batch.length / seconds,
      matchesAppended: stats.appended,
      ingestSeconds,
      setupSeconds,
      firstStartSeconds,
      restartSeconds,
    };
  } finally {
    controller.abort();
    await running;
    await store.close();
    await db.close();
    await admin.query(`drop schema ${schema} cascade`);
    await admin.close();
  }
}
