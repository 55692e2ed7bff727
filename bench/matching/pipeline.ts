import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import pino from 'pino';
import { type MatcherStats, realtimeMatcher } from '../../consumers/matcher/realtime.ts';
import type { AlertCreated } from '../../src/alerts/alert.ts';
import type { Db } from '../../src/db/db.ts';
import { migrate } from '../../src/db/migrate.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { comparePositions, START } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import { entityStream, storedEventId } from '../../src/ingestion/events.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import type { WatchedAlert } from '../../src/matching/types.ts';
import { readConsumerCheckpoint, runConsumer } from '../../src/subscriptions/consumer.ts';
import type { SyntheticEntity } from './synthetic.ts';

const DATABASE_URL =
  process.env.BENCH_DATABASE_URL ??
  process.env.TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/test';

const PRODUCERS = Number(process.env.PIPELINE_PRODUCERS ?? 4);
/** Episodes per ingestEvents call: one POST /v1/ingest/events of a producer (1 = as the Kafka worker appends). */
const EPISODES_PER_INGEST = Number(process.env.PIPELINE_INGEST_BATCH ?? 5);
const CLOCK_TICKS_PER_SECOND = 100;

export interface PipelineResult {
  episodes: number;
  seconds: number;
  episodesPerSecond: number;
  matchesAppended: number;
  ingestSeconds: number;
  /** CPU time of this process during the measured run (ingestion and matcher). */
  nodeCpuSeconds: number;
  /** CPU time of this run's PostgreSQL backends during the measured run (WAL writer etc. not counted). */
  postgresCpuSeconds: number;
  setupSeconds: number;
  firstStartSeconds: number;
  restartSeconds: number;
}

/** Bench setup only: stores many first events of new streams in one statement (not the measured path). */
export async function bulkStore(db: Db, rows: { s: string; id: string; t: string; d: unknown }[]) {
  for (let i = 0; i < rows.length; i += 2000) {
    await db.query(
      `with input as (
         select j->>'s' as stream_id, j->>'id' as event_id, j->>'t' as type, (j->'d')::json as data
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

/** A bulkStore row: the entity's entity.upserted as stored. */
export function entityRow(entity: SyntheticEntity, eventId: string, occurredAt: string) {
  const event = {
    type: 'entity.upserted',
    event_id: eventId,
    occurred_at: occurredAt,
    entity: {
      id: entity.id,
      slug: entity.id,
      name: entity.name,
      entity_type: entity.type,
      aliases: entity.aliases,
    },
  };
  return { s: entityStream(entity.id), id: storedEventId(eventId), t: 'EntityUpserted', d: event };
}

/** A bulkStore row: the alert's AlertCreated. */
export const alertRow = (alert: WatchedAlert) => ({
  s: `alert-${alert.alertId}`,
  id: `created-${alert.alertId}`,
  t: 'AlertCreated',
  d: alertCreated(alert),
});

export function alertCreated(alert: WatchedAlert): AlertCreated['data'] {
  const { languages, relevance, sourcePopularity, speakerRoles } = alert.filters;
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
      ...(sourcePopularity ? { sourcePopularity: [...sourcePopularity] } : {}),
      ...(speakerRoles ? { speakerRoles: [...speakerRoles] } : {}),
    },
    disableTokens: [],
    createdAt: '2026-11-20T00:00:00.000Z',
  };
}

/** CPU seconds so far of each PostgreSQL backend of this run, by pid (read from /proc: local server only). */
async function backendCpu(admin: Db, applicationName: string): Promise<Map<number, number>> {
  const { rows } = await admin.query<{ pid: number }>(
    'select pid from pg_stat_activity where application_name = $1',
    [applicationName],
  );
  const cpu = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(')').at(-1)!.trim().split(' ');
      cpu.set(pid, (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND);
    } catch {
      // Not on this machine, or the backend just ended.
    }
  }
  return cpu;
}

function cpuSince(before: Map<number, number>, after: Map<number, number>): number {
  let seconds = 0;
  for (const [pid, total] of after) seconds += total - (before.get(pid) ?? 0);
  return seconds;
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
 * (default 4) producers at once, each posting PIPELINE_INGEST_BATCH (default 5) episodes per call.
 * Prints the CPU time of this process and of its PostgreSQL backends (a local server), the honest
 * figure on a shared machine.
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
  // A name of its own, so this run's backends can be told apart for CPU accounting.
  const applicationName = `earshot-${schema}`;
  const url = new URL(DATABASE_URL);
  url.searchParams.set('application_name', applicationName);
  const db = openPostgres({ connectionString: url.toString(), schema, max: 24 });
  const store = createPostgresEventStore(db, { pollIntervalMs: 20 });
  const controller = new AbortController();
  let running: Promise<void> | undefined;
  try {
    await migrate(db);
    let started = performance.now();
    await bulkStore(
      db,
      entities.map((entity) => entityRow(entity, `bench-entity-${entity.id}`, '2026-11-01T00:00:00Z')),
    );
    await bulkStore(db, alerts.map(alertRow));
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
    const postgresCpuBefore = await backendCpu(admin, applicationName);
    const nodeCpuBefore = process.cpuUsage();
    started = performance.now();
    // Several producers post at once, as they would to the ingestion entry or from Kafka partitions.
    let next = 0;
    await Promise.all(
      Array.from({ length: PRODUCERS }, async () => {
        while (next < batch.length) {
          const from = next;
          next += EPISODES_PER_INGEST;
          await ingestEvents(store, batch.slice(from, from + EPISODES_PER_INGEST));
        }
      }),
    );
    const ingestSeconds = (performance.now() - started) / 1000;
    await waitForCheckpoint(db, await head(db));
    const seconds = (performance.now() - started) / 1000;
    const nodeCpu = process.cpuUsage(nodeCpuBefore);
    const nodeCpuSeconds = (nodeCpu.user + nodeCpu.system) / 1e6;
    const postgresCpuSeconds = cpuSince(postgresCpuBefore, await backendCpu(admin, applicationName));
    console.log(
      `pipeline CPU: this process ${nodeCpuSeconds.toFixed(1)} s, its PostgreSQL backends ${postgresCpuSeconds.toFixed(1)} s ` +
        `→ ${(batch.length / (nodeCpuSeconds + postgresCpuSeconds)).toFixed(1)} episodes per CPU-second ` +
        `(${(batch.length / nodeCpuSeconds).toFixed(1)} per CPU-second of this process); ` +
        `${PRODUCERS} producers × ${EPISODES_PER_INGEST} episodes per ingest call; load average ${loadavg()[0]!.toFixed(1)}`,
    );
    controller.abort();
    await running;
    running = undefined;

    // A restart rebuilds the watchlist as of the checkpoint: from the matcher's snapshot (written by
    // the first start) and the alert, entity and podcast events stored after it.
    const checkpoint = await readConsumerCheckpoint(db, { name: 'matcher' });
    started = performance.now();
    const restartCpu = process.cpuUsage();
    await realtimeMatcher(deps).start?.(checkpoint, new AbortController().signal);
    const restartSeconds = (performance.now() - started) / 1000;
    const { user, system } = process.cpuUsage(restartCpu);
    console.log(
      `matcher restart: ${restartSeconds.toFixed(2)} s, ${((user + system) / 1e6).toFixed(2)} s CPU of this process; load average ${loadavg()[0]!.toFixed(1)}`,
    );

    return {
      episodes: batch.length,
      seconds,
      episodesPerSecond: batch.length / seconds,
      matchesAppended: stats.appended,
      ingestSeconds,
      nodeCpuSeconds,
      postgresCpuSeconds,
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
