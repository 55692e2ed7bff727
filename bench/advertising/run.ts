// bench/advertising (npm run bench:advertising): a generated corpus of BENCH_ADS ads (default
// 1,000,000) over BENCH_SPONSORS sponsors (5,000) on the catalog bench's shape (10,000 shows of 20
// episodes over two years), written straight into the read models (generate.ts). Measures, through
// the real routes (fastify inject, one request at a time): the snapshot refresh; leaderboard p99 for
// a snapshot window (target < 20 ms) and for arbitrary, never-cached windows (< 300 ms); the
// timeseries p99 of a company over two years, weekly (< 100 ms); related podcasts p99 (< 100 ms);
// GET /v1/podcasts/{id} with its related shows and recommendations p99 (< 100 ms).
// BENCH_SCHEMA keeps (and reuses) the generated corpus; BENCH_REQUESTS sets requests per figure.
import { randomBytes } from 'node:crypto';
import { refreshLeaderboardSnapshots } from '../../src/advertising/leaderboard.ts';
import { migrate } from '../../src/db/migrate.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { percentile } from '../support/percentile.ts';
import { advertisingApp } from './app.ts';
import { generateCorpus } from './generate.ts';

const BASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const n = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const size = {
  podcasts: n('BENCH_PODCASTS', 10_000),
  episodesPerPodcast: n('BENCH_EPISODES_PER_PODCAST', 20),
  ads: n('BENCH_ADS', 1_000_000),
  sponsors: n('BENCH_SPONSORS', 5_000),
  companies: n('BENCH_COMPANIES', 2_000),
  guests: n('BENCH_GUESTS', 50_000),
  topics: n('BENCH_TOPICS', 200),
  publishers: n('BENCH_PUBLISHERS', 500),
};
const REQUESTS = n('BENCH_REQUESTS', 200);
const WARMUP = 5;
const NOW = new Date('2026-11-20T12:00:00Z');
const kept = process.env.BENCH_SCHEMA;
const schema = kept ?? `bench_ads_${randomBytes(4).toString('hex')}`;

const admin = openPostgres({ connectionString: BASE_URL, max: 1 });
await admin.query(`create schema if not exists ${schema}`);
const db = openPostgres({ connectionString: BASE_URL, schema, max: 10 });
await migrate(db);

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const { rows: existing } = await db.query<{ n: number }>('select count(*)::int as n from ads');
const { rows: facts } = await db.query<{ n: number }>('select count(*)::int as n from ad_facts');
if (existing[0]!.n === 0 || facts[0]!.n === 0) {
  if (existing[0]!.n > 0)
    for (const table of ['ads', 'podcasts', 'entities', 'podcast_link_episodes', 'podcast_links'])
      await db.query(`truncate ${table}`);
  const started = performance.now();
  await generateCorpus(db, size, NOW, console.log);
  console.log(
    `generated ${size.ads} ads over ${size.sponsors} sponsors in ${seconds(performance.now() - started)}`,
  );
} else console.log(`reusing ${existing[0]!.n} ads in schema ${schema}`);

const started = performance.now();
await refreshLeaderboardSnapshots(db, NOW);
const refreshMs = performance.now() - started;
console.log(`snapshot refresh (three windows): ${seconds(refreshMs)}`);

const { app, headers } = await advertisingApp(db, NOW);

let seed = 7;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};
const day = (offsetDays: number) =>
  new Date(NOW.getTime() - offsetDays * 86_400_000).toISOString().slice(0, 10);

async function measure(
  label: string,
  target: number,
  next: (i: number) => Record<string, string> & { url: string },
) {
  const times: number[] = [];
  // The first requests of a route compile its schemas and warm the connections: not counted.
  for (let i = -WARMUP; i < REQUESTS; i++) {
    const { url, ...query } = next(i);
    const t = performance.now();
    const response = await app.inject({ url, query, headers });
    if (i >= 0) times.push(performance.now() - t);
    if (response.statusCode !== 200) throw new Error(`${label}: ${response.statusCode} ${response.body}`);
  }
  times.sort((a, b) => a - b);
  const p99 = Number(percentile(times, 99).toFixed(1));
  console.log(
    `${label}: p50 ${percentile(times, 50).toFixed(1)} ms, p99 ${p99} ms (target < ${target} ms) ${p99 < target ? 'ok' : 'MISSED'}`,
  );
  return p99;
}

const metrics = ['ad_count', 'podcast_reach', 'episode_reach'];
const LEADERBOARD = '/v1/podcasts/advertising/leaderboard';
await measure('leaderboard, snapshot windows', 20, (i) => ({
  url: LEADERBOARD,
  metric: metrics[Math.abs(i) % 3]!,
  ...(Math.abs(i) % 3 === 1
    ? { since: day(7) }
    : Math.abs(i) % 3 === 2
      ? { since: day(37), until: day(30) }
      : {}),
}));
await measure('leaderboard, arbitrary windows (uncached)', 300, (i) => {
  const from = 40 + Math.floor(random() * 600);
  const length = 7 + ((Math.abs(i) * 13) % 84);
  return { url: LEADERBOARD, metric: metrics[Math.abs(i) % 3]!, since: day(from), until: day(from - length) };
});
await measure('timeseries, a company over two years, weekly', 100, () => ({
  url: '/v1/podcasts/advertising/timeseries',
  company_id: `co-${Math.floor(random() * size.companies)}`,
  since: day(730),
  until: day(0),
  interval: 'week',
}));
await measure('related podcasts', 100, () => ({
  url: `/v1/podcasts/pod-${Math.floor(random() * size.podcasts)}/related`,
}));
await measure('a podcast with related shows and recommendations', 100, () => ({
  url: `/v1/podcasts/pod-${Math.floor(random() * size.podcasts)}`,
}));

await app.close();
await db.close();
if (!kept) await admin.query(`drop schema ${schema} cascade`);
await admin.close();
