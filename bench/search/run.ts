// bench/search: dialogue search over a synthetic corpus of transcribed episodes (docs/search.md,
// "Benchmark"). Ingests through the projections (catalog read models, then the passage index, each
// timed), then measures p50/p99 at BENCH_CLIENTS concurrent clients of four API calls next to a
// hand-written tsquery on the same tables, in the same run.
//   BENCH_EPISODES (default 1000) × BENCH_LINES (default 2000) lines; BENCH_REQUESTS per query (200).
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { catalogEpisodesProjection } from '../../projections/catalog-episodes/projection.ts';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { podcastsProjection } from '../../projections/podcasts/projection.ts';
import { searchPassagesProjection } from '../../projections/search-passages/projection.ts';
import { transcriptsProjection } from '../../projections/transcripts/projection.ts';
import { catalogProjections } from '../../src/catalog/capability.ts';
import type { Queryable } from '../../src/db/db.ts';
import { migrate } from '../../src/db/migrate.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import type { PodcastUpserted } from '../../src/ingestion/catalog-events.ts';
import type { EntityUpserted, EpisodeTranscribed } from '../../src/ingestion/events.ts';
import { createKey } from '../../src/platform/keys.ts';
import { createOrganization, createProject } from '../../src/platform/organizations.ts';
import { searchCapability } from '../../src/search/capability.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';
import { episodeEvent, podcastEvent } from '../catalog/synthetic.ts';

const BASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const EPISODES = Number(process.env.BENCH_EPISODES ?? 1000);
const LINES = Number(process.env.BENCH_LINES ?? 2000);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 4);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);
const BATCH = 20;
const KEEP = process.env.BENCH_KEEP === '1';
// The ingest target on the catalog bench's mix: 20 episodes per podcast, every 10th
// transcribed with BENCH_LINES lines (of this corpus' vocabulary), 25 podcasts per batch.
const MIX_PODCASTS = Number(process.env.BENCH_MIX_PODCASTS ?? 50);
const INGEST_TARGET = 300;
const schema = process.env.BENCH_SCHEMA ?? `bench_search_${randomBytes(4).toString('hex')}`;
const END = Date.parse('2026-11-20T00:00:00Z');
const SPAN = 2 * 365 * 86_400_000;

// Deterministic generators (one for the corpus, one for the mix) and a Zipf-like vocabulary of
// 20,000 pseudo-words.
const generator = (start: number) => {
  let seed = start;
  return () => {
    seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0;
    return ((seed ^ (seed >>> 13)) >>> 0) / 4294967296;
  };
};
const random = generator(42);
const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'shi', 'den', 'por', 'gal', 'tek', 'zu', 'bra'];
const VOCAB = Array.from({ length: 20_000 }, (_, i) => {
  let word = '';
  for (let n = i + 1; n > 0; n = Math.floor(n / SYLLABLES.length)) word += SYLLABLES[n % SYLLABLES.length];
  return word;
});
const zipf = (next: () => number) =>
  VOCAB[Math.min(VOCAB.length - 1, Math.floor(Math.exp(next() * Math.log(VOCAB.length))) - 1)]!;

function line(next = random): string {
  const words = Array.from({ length: 8 + Math.floor(next() * 8) }, () => zipf(next));
  const r = next();
  if (r < 0.002) words.splice(3, 0, 'Jensen', 'Huang');
  else if (r < 0.004) words.splice(2, 0, 'supply', 'chain');
  return `${words.join(' ')}.`;
}

function episode(i: number): EpisodeTranscribed {
  const published = new Date(END - Math.floor((i / EPISODES) * SPAN)).toISOString();
  return {
    type: 'episode.transcribed',
    event_id: `bench-${i}`,
    occurred_at: '2026-11-20T00:00:00Z',
    podcast: { id: `pod-${i % 200}`, title: `Show ${i % 200}`, language: 'en', popularity: random() },
    episode: { id: `ep-${i}`, title: `Episode ${i}`, published_at: published, duration_seconds: LINES * 5 },
    speakers: [{ id: 'h', name: 'Host', role: 'HOST' }],
    transcript: {
      language: 'en',
      lines: Array.from({ length: LINES }, (_, n) => ({
        number: n + 1,
        speaker_id: 'h',
        start_seconds: n * 5,
        end_seconds: n * 5 + 4.5,
        text: line(),
      })),
    },
  };
}

const recorded = (
  data: EpisodeTranscribed | EntityUpserted | PodcastUpserted,
  type: string,
  n: number,
): RecordedEvent => ({
  id: `${n}`,
  streamId: `s-${n}`,
  revision: 0,
  position: `${n}`,
  type,
  data,
  metadata: {} as RecordedEvent['metadata'],
  recordedAt: new Date(),
});

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
const ms = (n: number) => `${n.toFixed(1)} ms`;

/** Runs `task` REQUESTS times from CLIENTS concurrent loops; latencies in ms. */
async function measure(task: (i: number) => Promise<void>) {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < REQUESTS) {
        const i = next++;
        const started = performance.now();
        await task(i);
        latencies.push(performance.now() - started);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
}

const only = (projection: Projection, events: RecordedEvent[]) =>
  events.filter((e) => projection.eventTypes.includes(e.type));

/** The catalog bench's mix, every tenth episode transcribed with LINES lines of this corpus' words. */
function mixBatches(): RecordedEvent[][] {
  const now = new Date(END);
  const next = generator(7);
  const batches: RecordedEvent[][] = [];
  let n = 0;
  for (let p = 0; p < MIX_PODCASTS; p += 25) {
    const events: RecordedEvent[] = [];
    for (let q = p; q < Math.min(MIX_PODCASTS, p + 25); q++) {
      events.push(recorded(podcastEvent(q), 'PodcastUpserted', ++n));
      for (let k = 0; k < 20; k++) {
        const event = episodeEvent(q, k, (q * 20 + k) % 10 === 0 ? LINES : 0, now);
        for (const l of event.transcript?.lines ?? []) l.text = line(next);
        events.push(recorded(event, 'EpisodeTranscribed', ++n));
      }
    }
    batches.push(events);
  }
  return batches;
}

/**
 * Ingest of the mix into every catalog read model and the passage index, each in its own schema
 * run: `serial` applies each batch to the catalog models, then to the index (each timed);
 * otherwise the two run at once on their own connections, as their subscriptions do in service.
 */
async function ingestMix(batches: RecordedEvent[][], serial: boolean) {
  const mixSchema = `${schema}_mix`;
  await admin.query(`create schema ${mixSchema}`);
  const mix = openPostgres({ connectionString: BASE_URL, schema: mixSchema, max: 2 });
  try {
    await migrate(mix);
    const catalog = (events: RecordedEvent[]) =>
      mix.transaction(async (tx: Queryable) => {
        for (const projection of catalogProjections) await projection.apply(tx, only(projection, events));
      });
    const index = (events: RecordedEvent[]) =>
      mix.transaction((tx) => searchPassagesProjection.apply(tx, only(searchPassagesProjection, events)));
    let catalogMs = 0;
    let indexMs = 0;
    let totalMs = 0;
    for (const events of batches) {
      const started = performance.now();
      if (serial) {
        await catalog(events);
        catalogMs += performance.now() - started;
        const cataloged = performance.now();
        await index(events);
        indexMs += performance.now() - cataloged;
      } else await Promise.all([catalog(events), index(events)]);
      totalMs += performance.now() - started;
    }
    return { catalogMs, indexMs, totalMs };
  } finally {
    await mix.close();
    await admin.query(`drop schema ${mixSchema} cascade`);
  }
}

async function catalogMix() {
  const batches = mixBatches();
  const episodes = MIX_PODCASTS * 20;
  const serial = await ingestMix(batches, true);
  const concurrent = await ingestMix(batches, false);
  const rate = (totalMs: number) => {
    const perSecond = (episodes / totalMs) * 1000;
    return `${perSecond.toFixed(0)} episodes/s (target ≥ ${INGEST_TARGET}: ${perSecond >= INGEST_TARGET ? 'met' : 'NOT met'})`;
  };
  console.log(
    `catalog mix: ${episodes} episodes, ${episodes / 10} transcribed with ${LINES} lines, ${batches.length} batches`,
  );
  // The target is for ingest with the index on; the parts alone are its yardsticks.
  const alone = (ms: number) => `${((episodes / ms) * 1000).toFixed(0)} episodes/s`;
  console.log(`  catalog read models alone: ${alone(serial.catalogMs)}`);
  console.log(`  passage index alone: ${alone(serial.indexMs)}`);
  console.log(`  with the passage index, one after the other: ${rate(serial.totalMs)}`);
  console.log(`  with the passage index, on two connections at once: ${rate(concurrent.totalMs)}`);
}

const admin = openPostgres({ connectionString: BASE_URL, max: 1 });
await admin.query(`create schema if not exists ${schema}`);
const db = openPostgres({ connectionString: BASE_URL, schema, max: 8 });
try {
  await migrate(db);
  if (MIX_PODCASTS > 0) await catalogMix();
  const { rows: existing } = await db.query<{ n: number }>('select count(*)::int as n from catalog_episodes');
  if (existing[0]!.n === 0) {
    const entity: EntityUpserted = {
      type: 'entity.upserted',
      event_id: 'bench-entity',
      occurred_at: '2026-11-20T00:00:00Z',
      entity: { id: 'ent-jensen', slug: 'jensen-huang', name: 'Jensen Huang', entity_type: 'PERSON' },
    };
    await db.transaction((tx) => entitiesProjection.apply(tx, [recorded(entity, 'EntityUpserted', 0)]));
    const catalog: Projection[] = [podcastsProjection, catalogEpisodesProjection, transcriptsProjection];
    let catalogMs = 0;
    let indexMs = 0;
    let generateMs = 0;
    for (let first = 0; first < EPISODES; first += BATCH) {
      const started = performance.now();
      const events = Array.from({ length: Math.min(BATCH, EPISODES - first) }, (_, k) =>
        recorded(episode(first + k), 'EpisodeTranscribed', first + k + 1),
      );
      const generated = performance.now();
      await db.transaction(async (tx: Queryable) => {
        for (const projection of catalog) await projection.apply(tx, events);
      });
      const cataloged = performance.now();
      await db.transaction((tx) => searchPassagesProjection.apply(tx, events));
      const indexed = performance.now();
      generateMs += generated - started;
      catalogMs += cataloged - generated;
      indexMs += indexed - cataloged;
      if ((first / BATCH) % 10 === 0) process.stderr.write(`ingested ${first + events.length}/${EPISODES}\n`);
    }
    console.log(
      `corpus: ${EPISODES} episodes × ${LINES} lines = ${((EPISODES * LINES) / 1e6).toFixed(2)} M lines`,
    );
    console.log(`generation ${(generateMs / 1000).toFixed(1)} s (not counted)`);
    console.log(`catalog read models alone: ${((EPISODES / catalogMs) * 1000).toFixed(0)} episodes/s`);
    console.log(`passage index alone: ${((EPISODES / indexMs) * 1000).toFixed(0)} episodes/s`);
    console.log(
      `catalog with the index on: ${((EPISODES / (catalogMs + indexMs)) * 1000).toFixed(0)} episodes/s`,
    );
    await db.query('analyze');
  } else console.log(`reusing ${existing[0]!.n} episodes in ${schema}`);

  const { rows: sizes } = await db.query<{
    table_bytes: string;
    index_bytes: string;
    rows: number;
    transcript_bytes: string;
    chunk_bytes: string;
  }>(
    `select pg_table_size('search_passage_rows')::text as table_bytes,
            pg_relation_size('search_passage_rows_words')::text as index_bytes,
            (select count(*)::int from search_passage_rows) as rows,
            pg_total_relation_size('transcripts')::text as transcript_bytes,
            pg_total_relation_size('transcript_chunks')::text as chunk_bytes`,
  );
  const lines = EPISODES * LINES;
  const perMillion = (bytes: string) => `${(((Number(bytes) / lines) * 1e6) / 2 ** 20).toFixed(0)} MiB`;
  console.log(
    `index per million lines: GIN ${perMillion(sizes[0]!.index_bytes)}, passage rows ${perMillion(sizes[0]!.table_bytes)} (${sizes[0]!.rows} rows); transcripts ${perMillion(sizes[0]!.transcript_bytes)}, their chunks ${perMillion(sizes[0]!.chunk_bytes)}`,
  );

  const org = await createOrganization(db, { name: 'Bench', plan: 'ENTERPRISE' });
  const project = await createProject(db, { organizationId: org.id, name: 'Bench' });
  const { key } = await createKey(db, { kind: 'project', projectId: project.id });
  const capability = searchCapability({ now: () => new Date(END) });
  const app = await buildHttpApp({
    db,
    cursorKey: Buffer.alloc(32, 1),
    // Four clients on one key at full speed: the benchmark measures the routes, not the rate limit.
    rateLimit: { perKey: 0, perAddress: 0, windowMs: 60_000 },
    routes: capability.routes ?? [],
  });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const get = async (path: string, query: Record<string, string>) => {
    const response = await fetch(`${address}${path}?${new URLSearchParams(query)}`, {
      headers: { 'x-api-key': key },
    });
    if (response.status !== 200) throw new Error(`${path} ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
  };
  const raw = (sql: string, params: unknown[]) => async () => {
    await db.query(sql, params);
  };
  // Word pairs: content words (frequency ranks 300–400, each ≈0.05% of words) and common words
  // (ranks 40–80, each ≈0.3% of words: a pair shares a 6-line window in about 3% of them).
  const pairAt = (base: number, span: number) => (i: number) => [
    VOCAB[base + (i % span)]!,
    VOCAB[base + 1 + ((i * 7) % (span - 1))]!,
  ];
  const pairs: [string, (i: number) => string[]][] = [
    ['two-word query', pairAt(300, 100)],
    ['two common words', pairAt(40, 40)],
  ];
  const since = new Date(END - 365 * 86_400_000).toISOString();
  // The hand-written queries on the index's rows (docs/search.md, "Index design"): `linesOf(word)` is
  // the bit per line of the row holding the word (positions are 682 per line), a passage start s
  // holds it when bit s of lines | lines >> 1 | … | lines >> 4 is set; a row's own starts and lines
  // are its first 20 (mask 1048575).
  const linesOf = (param: string) =>
    `coalesce((select bit_or(1 << ((p - 1) / 682)) from unnest(ts_filter(setweight(words, 'A', array[${param}]), '{a}')) u,
                      unnest(u.positions) p), 0)`;
  const reach = (m: string) => `(${m} | (${m} >> 1) | (${m} >> 2) | (${m} >> 3) | (${m} >> 4))`;
  const phraseLines = `coalesce((with f as (select lexeme, positions from unnest(ts_filter(setweight(words, 'A', '{jensen,huang}'), '{a}')))
                                 select bit_or(1 << ((p - 1) / 682)) from f, unnest(f.positions) p
                                  where f.lexeme = 'jensen' and exists (select from f g where g.lexeme = 'huang' and p + 1 = any(g.positions))), 0)
                       & 1048575`;
  const cases: [string, (i: number) => Promise<void>, (i: number) => Promise<void>][] = [
    ...pairs.map(([name, pair]): [string, (i: number) => Promise<void>, (i: number) => Promise<void>] => [
      name,
      (i) => get('/v1/podcasts/episodes/search', { keyword_search: pair(i).join(' ') }),
      (i) =>
        raw(
          `select episode_id, max(r) as r
             from (select episode_id, ts_rank(words, q) as r, ${linesOf('$2::text')} as a, ${linesOf('$3::text')} as b
                     from search_passage_rows, to_tsquery('simple', $1) as q where words @@ q offset 0) c
            where (${reach('a')} & ${reach('b')} & 1048575) <> 0
            group by episode_id order by r desc limit 26`,
          [pair(i).join(' & '), ...pair(i)],
        )(),
    ]),
    [
      'quoted phrase',
      () => get('/v1/podcasts/episodes/search', { keyword_search: '"supply chain"' }),
      raw(
        `select episode_id, max(ts_rank(words, q)) as r from search_passage_rows, to_tsquery('simple', 'supply <-> chain') as q
          where words @@ q group by episode_id order by r desc limit 26`,
        [],
      ),
    ],
    [
      'entity mention list',
      () => get('/v1/podcasts/mentions', { entity_id: 'ent-jensen' }),
      raw(
        `with q as (select to_tsquery('simple', 'jensen <-> huang') as q),
              page as (select e.id from catalog_episodes e
                        where e.id in (select episode_id from search_passage_rows, q where words @@ q.q)
                        order by e.published_at desc limit 26)
         select hit.episode_id, l.line
           from (select p.episode_id, array_agg(p.start + b) as lines
                   from (select episode_id, start, ${phraseLines} as m
                           from search_passage_rows p join page on page.id = p.episode_id, q
                          where p.words @@ q.q offset 0) p, generate_series(0, 19) b
                  where p.m & (1 << b) <> 0 group by p.episode_id) hit
           cross join lateral (select l.line from transcript_chunks c,
                                      json_array_elements(c.lines::json) with ordinality as l(line, n)
                                where c.episode_id = hit.episode_id
                                  and c.chunk in (select s / 16 from unnest(hit.lines) as s)
                                  and c.chunk * 16 + l.n - 1 = any(hit.lines)) l`,
        [],
      ),
    ],
    [
      '1-year weekly timeseries',
      () => get('/v1/podcasts/mentions/timeseries', { entity_id: 'ent-jensen', interval: 'week', since }),
      raw(
        `select date_trunc('week', e.published_at at time zone 'UTC') as w, count(*), sum(d.n)
           from catalog_episodes e
           join (select episode_id, sum(bit_count(m::bit(20))) as n
                   from (select episode_id, ${phraseLines} as m from search_passage_rows
                          where words @@ to_tsquery('simple', 'jensen <-> huang') offset 0) r
                  group by episode_id) d on d.episode_id = e.id
          where e.published_at >= $1::timestamptz group by 1`,
        [since],
      ),
    ],
  ];
  console.log(`\n${CLIENTS} concurrent clients, ${REQUESTS} requests each case`);
  console.log('case                       API p50 / p99            raw tsquery p50 / p99     p99 ratio');
  for (const [name, api, sql] of cases) {
    await api(0);
    await sql(0);
    const a = await measure(api);
    const r = await measure(sql);
    console.log(
      `${name.padEnd(26)} ${ms(a.p50).padStart(9)} / ${ms(a.p99).padEnd(12)} ${ms(r.p50).padStart(9)} / ${ms(r.p99).padEnd(12)} ${(a.p99 / r.p99).toFixed(2)}×`,
    );
  }
  await app.close();
} finally {
  await db.close();
  if (!KEEP) await admin.query(`drop schema ${schema} cascade`);
  await admin.close();
}
