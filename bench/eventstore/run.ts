/**
 * Event-store benchmark (npm run bench:eventstore). Against BENCH_DATABASE_URL (default: the test
 * database), in a schema of its own that is dropped afterwards:
 *  - single-event appends/s, 100-event batch appends (events/s) and appendMany calls of 500
 *    one-event appends to new streams (events/s, as the matcher appends matches), each beside a raw
 *    batched INSERT ... SELECT FROM unnest of the same rows into a plain table of the same shape;
 *  - catch-up: reading 1,000,000 events from START through readAll pages, in events/s.
 * Targets: batched append >= 50% of raw; catch-up >= 50,000 events/s. appendMany has none: it
 * also creates, locks and updates a stream row per append, which the raw insert does not. Exits 1 when one is missed.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Db } from '../../src/db/db.ts';
import { migrate } from '../../src/db/migrate.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import type { NewEvent } from '../../src/eventstore/port.ts';
import { START } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';

const DATABASE_URL =
  process.env.BENCH_DATABASE_URL ??
  process.env.TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/test';
const WORKERS = 8;
const SINGLE_APPENDS = 4_000;
const BATCHES = 400;
const BATCH_SIZE = 100;
const MANY_CALLS = 80;
const APPENDS_PER_CALL = 500;
const CATCH_UP_EVENTS = 1_000_000;
const PAGE_SIZE = 1_000;

const RAW_TABLE = `create table raw_events (
  global_position bigint generated always as identity,
  transaction_id xid8 not null default pg_current_xact_id(),
  stream_id text not null,
  stream_revision bigint not null,
  event_id text not null,
  type text not null,
  data json not null,
  metadata json not null default '{}',
  recorded_at timestamptz not null default now()
)`;

const RAW_INSERT = `insert into raw_events (stream_id, stream_revision, event_id, type, data, metadata)
  select * from unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::json[], $6::json[])`;

function episodeEvent(i: number): NewEvent {
  return {
    id: randomUUID(),
    type: 'EpisodeTranscribed',
    data: {
      episodeId: `ep_${i}`,
      podcastId: `pod_${i % 97}`,
      title: `Episode ${i}: the state of the art in something or other`,
      publishedAt: '2026-11-20T10:00:00Z',
      mentions: [{ entityId: `ent_${i % 13}`, line: i % 40, startSeconds: 12.5 }],
      transcribedAt: '2026-11-20T11:00:00Z',
    },
    metadata: { correlationId: randomUUID() },
  };
}

function rawParams(streamId: string, firstRevision: number, events: readonly NewEvent[]): unknown[] {
  return [
    events.map(() => streamId),
    events.map((_, i) => firstRevision + i),
    events.map((event) => event.id),
    events.map((event) => event.type),
    events.map((event) => JSON.stringify(event.data)),
    events.map((event) => JSON.stringify(event.metadata ?? {})),
  ];
}

/** Runs `jobs` calls of fn over WORKERS concurrent workers; returns seconds elapsed. */
async function timed(jobs: number, fn: (job: number, worker: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: WORKERS }, async (_, worker) => {
      for (let job = next++; job < jobs; job = next++) await fn(job, worker);
    }),
  );
  return (performance.now() - started) / 1000;
}

interface Row {
  measure: string;
  earshot: number;
  raw?: number;
  unit: string;
  target?: { ratio?: number; min?: number };
}

async function fillEvents(db: Db, count: number): Promise<void> {
  // Chunks in their own transactions, so positions span many transaction ids as in production.
  const chunk = 100_000;
  for (let from = 0; from < count; from += chunk) {
    await db.query(
      `insert into events (stream_id, stream_revision, event_id, type, data, metadata)
       select 'fill-' || (i / 10), i % 10, 'fill-' || i, 'EpisodeTranscribed',
              json_build_object('episodeId', 'ep_' || i, 'podcastId', 'pod_' || (i % 97),
                'title', 'Episode ' || i || ': the state of the art in something or other',
                'publishedAt', '2026-11-20T10:00:00Z',
                'mentions', json_build_array(json_build_object('entityId', 'ent_' || (i % 13), 'line', i % 40)),
                'transcribedAt', '2026-11-20T11:00:00Z'),
              json_build_object('correlationId', md5(i::text))
       from generate_series($1::bigint, $2::bigint) as i`,
      [from, Math.min(from + chunk, count) - 1],
    );
  }
  await db.query('analyze events');
}

function format(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function printTable(rows: Row[]): boolean {
  const header = ['measure', 'earshot', 'raw INSERT', 'ratio', 'target', 'result'];
  let allMet = true;
  const lines = rows.map((row) => {
    const ratio = row.raw ? row.earshot / row.raw : undefined;
    let target = '';
    let met: boolean | undefined;
    if (row.target?.ratio !== undefined && ratio !== undefined) {
      target = `>= ${row.target.ratio * 100}% of raw`;
      met = ratio >= row.target.ratio;
    } else if (row.target?.min !== undefined) {
      target = `>= ${format(row.target.min)} ${row.unit}`;
      met = row.earshot >= row.target.min;
    }
    if (met === false) allMet = false;
    return [
      row.measure,
      `${format(row.earshot)} ${row.unit}`,
      row.raw ? `${format(row.raw)} ${row.unit}` : '-',
      ratio !== undefined ? `${(ratio * 100).toFixed(0)}%` : '-',
      target || '-',
      met === undefined ? '-' : met ? 'PASS' : 'FAIL',
    ];
  });
  const widths = header.map((title, column) =>
    Math.max(title.length, ...lines.map((line) => line[column]!.length)),
  );
  const render = (cells: string[]) =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  console.log(render(header));
  console.log(`|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`);
  for (const line of lines) console.log(render(line));
  return allMet;
}

async function main(): Promise<void> {
  const schema = `bench_${randomBytes(5).toString('hex')}`;
  const admin = openPostgres({ connectionString: DATABASE_URL, max: 1 });
  await admin.query(`create schema ${schema}`);
  const db = openPostgres({ connectionString: DATABASE_URL, schema, max: WORKERS + 2 });
  const store = createPostgresEventStore(db);
  const cleanup = async () => {
    await store.close();
    await db.close();
    await admin.query(`drop schema ${schema} cascade`);
    await admin.close();
  };
  process.once('SIGINT', () => {
    cleanup().finally(() => process.exit(130));
  });

  try {
    await migrate(db);
    await db.exec(RAW_TABLE);
    console.log(`earshot event-store bench: ${DATABASE_URL.replace(/\/\/[^@/]*@/, '//')} schema ${schema}`);
    console.log(
      `${WORKERS} concurrent writers; ${SINGLE_APPENDS} single appends, ${BATCHES} batches of ${BATCH_SIZE}, ` +
        `${MANY_CALLS} appendMany calls of ${APPENDS_PER_CALL}\n`,
    );

    // Warm up connections and plans on both paths.
    await timed(WORKERS * 20, (job) => store.append(`warm-${job}`, [episodeEvent(job)]));
    await timed(WORKERS * 20, (job) =>
      db.query(RAW_INSERT, rawParams(`warm-${job}`, 0, [episodeEvent(job)])),
    );

    const singles = Array.from({ length: SINGLE_APPENDS }, (_, i) => episodeEvent(i));
    const rawSingle = await timed(SINGLE_APPENDS, (job) =>
      db.query(RAW_INSERT, rawParams(`single-${job % 500}`, Math.floor(job / 500), [singles[job]!])),
    );
    const storeSingle = await timed(SINGLE_APPENDS, (job) =>
      store.append(`single-${job % 500}`, [singles[job]!]),
    );

    const batches = Array.from({ length: BATCHES }, (_, b) =>
      Array.from({ length: BATCH_SIZE }, (_, i) => episodeEvent(b * BATCH_SIZE + i)),
    );
    const rawBatch = await timed(BATCHES, (job) =>
      db.query(RAW_INSERT, rawParams(`batch-${job}`, 0, batches[job]!)),
    );
    const storeBatch = await timed(BATCHES, (job) =>
      store.append(`batch-${job}`, batches[job]!, { expectedRevision: 'no_stream' }),
    );

    const manyCalls = Array.from({ length: MANY_CALLS }, (_, c) =>
      Array.from({ length: APPENDS_PER_CALL }, (_, i) => episodeEvent(c * APPENDS_PER_CALL + i)),
    );
    const rawMany = await timed(MANY_CALLS, (job) =>
      db.query(RAW_INSERT, [
        manyCalls[job]!.map((_, i) => `many-${job}-${i}`),
        manyCalls[job]!.map(() => 0),
        ...rawParams('', 0, manyCalls[job]!).slice(2),
      ]),
    );
    const storeMany = await timed(MANY_CALLS, (job) =>
      store.appendMany(
        manyCalls[job]!.map((event, i) => ({
          streamId: `many-${job}-${i}`,
          events: [event],
          options: { expectedRevision: 'no_stream' as const },
        })),
      ),
    );

    const fillStarted = performance.now();
    await fillEvents(db, CATCH_UP_EVENTS);
    const total = await store.countAll();
    console.log(
      `filled ${format(CATCH_UP_EVENTS)} events in ${((performance.now() - fillStarted) / 1000).toFixed(1)} s; reading ${format(total)} from START in pages of ${PAGE_SIZE}\n`,
    );
    let read = 0;
    let after = START;
    const readStarted = performance.now();
    for (;;) {
      const page = await store.readAll({ after, limit: PAGE_SIZE });
      read += page.events.length;
      if (page.events.length < PAGE_SIZE) break;
      after = page.lastPosition;
    }
    const readSeconds = (performance.now() - readStarted) / 1000;
    if (read !== total) throw new Error(`catch-up read ${read} events, expected ${total}`);

    const met = printTable([
      {
        measure: 'single-event appends',
        earshot: SINGLE_APPENDS / storeSingle,
        raw: SINGLE_APPENDS / rawSingle,
        unit: 'appends/s',
      },
      {
        measure: `${BATCH_SIZE}-event batch appends`,
        earshot: (BATCHES * BATCH_SIZE) / storeBatch,
        raw: (BATCHES * BATCH_SIZE) / rawBatch,
        unit: 'events/s',
        target: { ratio: 0.5 },
      },
      {
        measure: `appendMany, ${APPENDS_PER_CALL} new streams per call`,
        earshot: (MANY_CALLS * APPENDS_PER_CALL) / storeMany,
        raw: (MANY_CALLS * APPENDS_PER_CALL) / rawMany,
        unit: 'events/s',
      },
      {
        measure: `catch-up readAll (${format(read)} events)`,
        earshot: read / readSeconds,
        unit: 'events/s',
        target: { min: 50_000 },
      },
    ]);
    console.log(
      `\nbatches: ${format(BATCHES / storeBatch)} appends/s earshot vs ${format(BATCHES / rawBatch)} raw; ` +
        `appendMany: ${((MANY_CALLS * APPENDS_PER_CALL) / storeMany / (SINGLE_APPENDS / storeSingle)).toFixed(1)}× the one-event appends/s of single appends; ` +
        `catch-up took ${readSeconds.toFixed(1)} s`,
    );
    if (!met) process.exitCode = 1;
  } finally {
    await cleanup();
  }
}

await main();
