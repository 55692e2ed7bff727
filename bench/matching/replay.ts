/**
 * The realtime matcher's restart: how long `start(checkpoint)` takes to rebuild its in-memory state
 * (watchlist and show languages) when the store holds many versions of each show and entity, as a
 * catalog that re-sends podcast.upserted and entity.upserted on every crawl does, or many alerts
 * (REPLAY_ALERTS=100000 REPLAY_ENTITIES=50000 REPLAY_ENTITY_VERSIONS=1: docs/matching-pipeline.md,
 * "Restart"). Each start prints its wall time and the CPU time of this process.
 *
 *   npm run bench:matcher-replay
 *
 * Sizes (environment): REPLAY_SHOWS (10,000) × REPLAY_SHOW_VERSIONS (20) PodcastUpserted,
 * REPLAY_ENTITIES (5,000) × REPLAY_ENTITY_VERSIONS (4) EntityUpserted, REPLAY_ALERTS (10,000)
 * AlertCreated, REPLAY_EPISODES_BETWEEN (0) stored episodes between crawls ignored by the replay;
 * REPLAY_RUNS (3) timed starts. Everything is stored in a fresh schema of the benchmark PostgreSQL
 * (BENCH_DATABASE_URL, else TEST_DATABASE_URL, else the local test database).
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import pino from 'pino';
import { realtimeMatcher } from '../../consumers/matcher/realtime.ts';
import { migrate } from '../../src/db/migrate.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { START } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { podcastStream, storedEventId } from '../../src/ingestion/events.ts';
import { alertRow, bulkStore, entityRow } from './pipeline.ts';
import { syntheticAlerts, syntheticEntities } from './synthetic.ts';

const DATABASE_URL =
  process.env.BENCH_DATABASE_URL ??
  process.env.TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/test';
const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const SHOWS = env('REPLAY_SHOWS', 10_000);
const SHOW_VERSIONS = env('REPLAY_SHOW_VERSIONS', 20);
const ENTITIES = env('REPLAY_ENTITIES', 5_000);
const ENTITY_VERSIONS = env('REPLAY_ENTITY_VERSIONS', 4);
const ALERTS = env('REPLAY_ALERTS', 10_000);
const RUNS = env('REPLAY_RUNS', 3);
const LANGUAGES = ['en', 'en-US', 'de', 'fr', 'es', 'pt-BR', 'it', 'nl'];

const DESCRIPTION = 'A weekly conversation about technology, markets and the people who build them. '.repeat(
  6,
);

async function main() {
  const schema = `bench_${randomBytes(5).toString('hex')}`;
  const admin = openPostgres({ connectionString: DATABASE_URL, max: 1 });
  await admin.query(`create schema ${schema}`);
  const db = openPostgres({ connectionString: DATABASE_URL, schema, max: 4 });
  const store = createPostgresEventStore(db);
  try {
    await migrate(db);
    const started = performance.now();
    const entities = syntheticEntities(ENTITIES);
    const entityEvent = (entity: (typeof entities)[number], version: number) =>
      entityRow(
        entity,
        `bench-entity-${entity.id}-${version}`,
        new Date(Date.UTC(2026, 0, 1 + version)).toISOString(),
      );
    await bulkStore(
      db,
      entities.map((entity) => entityEvent(entity, 0)),
    );
    await bulkStore(db, syntheticAlerts(entities, ALERTS).map(alertRow));
    // One crawl after another: every show once per crawl, the entities for the first crawls.
    let lastCrawlBefore = START;
    for (let version = 0; version < Math.max(SHOW_VERSIONS, ENTITY_VERSIONS); version++) {
      lastCrawlBefore = (await store.headPosition!({})) ?? START;
      const rows: { s: string; r: number; id: string; t: string; d: unknown }[] = [];
      if (version < SHOW_VERSIONS) {
        for (let show = 0; show < SHOWS; show++) {
          const id = `bench-show-${show}`;
          const event = {
            type: 'podcast.upserted',
            event_id: `bench-podcast-${show}-${version}`,
            occurred_at: new Date(Date.UTC(2026, 0, 1 + version)).toISOString(),
            podcast: {
              id,
              title: `Bench show ${show}`,
              description: DESCRIPTION,
              url: `https://example.com/shows/${show}`,
              image_url: `https://cdn.example.com/shows/${show}.jpg`,
              feed_url: `https://feeds.example.com/${show}.xml`,
              // Some shows change language now and then.
              language: LANGUAGES[(show + Math.floor(version / 7) * (show % 3)) % LANGUAGES.length],
              popularity: show % 100,
              publisher: { id: `pub-${show % 500}`, name: `Publisher ${show % 500}` },
            },
          };
          rows.push({
            s: podcastStream(id),
            r: version,
            id: storedEventId(event.event_id),
            t: 'PodcastUpserted',
            d: event,
          });
        }
      }
      if (version > 0 && version < ENTITY_VERSIONS) {
        for (const entity of entities) {
          rows.push({ ...entityEvent(entity, version), r: version });
        }
      }
      await storeVersions(db, rows);
    }
    await db.query(
      `insert into streams (stream_id, revision)
         select stream_id, max(stream_revision) from events group by stream_id
       on conflict (stream_id) do update set revision = excluded.revision`,
    );
    await db.query('analyze events');
    const { rows: counted } = await db.query<{ type: string; n: string }>(
      'select type, count(*) as n from events group by type order by type',
    );
    const total = counted.reduce((sum, row) => sum + Number(row.n), 0);
    const checkpoint = (await store.headPosition!({})) ?? START;
    console.log(
      `matcher replay benchmark: ${counted.map((row) => `${row.n} ${row.type}`).join(', ')} ` +
        `stored in ${((performance.now() - started) / 1000).toFixed(1)} s (schema ${schema})`,
    );

    // The store holds back events behind any transaction still open in the cluster: wait until
    // every one is readable, or a start would replay only part of them.
    while ((await store.countAll({})) < total) await new Promise((resolve) => setTimeout(resolve, 50));
    const log = pino({ level: 'silent' });
    const deps = { db, store, log, now: () => new Date() };
    const load = () =>
      loadavg()
        .map((l) => l.toFixed(2))
        .join(' ');
    const timeStart = async (label: string, at: string) => {
      const started = performance.now();
      const cpu = process.cpuUsage();
      await realtimeMatcher(deps).start!(at, new AbortController().signal);
      const ms = performance.now() - started;
      const { user, system } = process.cpuUsage(cpu);
      console.log(
        `start() ${label}: ${ms.toFixed(0)} ms, ${((user + system) / 1000).toFixed(0)} ms CPU of this process ` +
          `(${Math.round(total / (ms / 1000))} state events/s to the checkpoint); load average ${load()}`,
      );
      return ms;
    };
    // The first start finds no snapshot (and, where snapshots exist, writes one at the checkpoint).
    await timeStart(`first, ${total} state events to the checkpoint`, checkpoint);
    const times: number[] = [];
    for (let run = 1; run <= RUNS; run++) times.push(await timeStart(`restart ${run}`, checkpoint));
    times.sort((a, b) => a - b);
    console.log(`restart median ${times[Math.floor(times.length / 2)]!.toFixed(0)} ms over ${RUNS} runs`);
    // A snapshot one crawl behind the checkpoint: a start at the crawl before (which replaces a
    // snapshot ahead of it), then a start at the checkpoint.
    await realtimeMatcher(deps).start!(lastCrawlBefore, new AbortController().signal);
    await timeStart('restart with the snapshot one crawl behind', checkpoint);
  } finally {
    await store.close();
    await db.close();
    await admin.query(`drop schema ${schema} cascade`);
    await admin.close();
  }
}

/** Bench setup only: later revisions of streams, in one statement per 2,000 events. */
async function storeVersions(
  db: ReturnType<typeof openPostgres>,
  rows: { s: string; r: number; id: string; t: string; d: unknown }[],
) {
  for (let i = 0; i < rows.length; i += 2000) {
    await db.query(
      `insert into events (stream_id, stream_revision, event_id, type, data, metadata)
       select j->>'s', (j->>'r')::bigint, j->>'id', j->>'t', (j->'d')::json, '{}'
         from jsonb_array_elements($1::jsonb) j`,
      [JSON.stringify(rows.slice(i, i + 2000))],
    );
  }
}

await main();
