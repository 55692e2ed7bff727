// bench/advertising/wide.ts (npm run bench:advertising-wide): what related shows, related episodes
// and recommendations cost on wide shows and episodes (docs/advertising.md, "Scores", Profiles). A
// corpus of generate.ts (10,000 shows of 20 episodes, 500,000 ads) and 60 wide shows (wide-0 to
// wide-59) of 5 episodes each, every episode carrying what the ingestion schemas allow: 500 guests
// (one of them `wide-guest`, on every wide show), 1,000 sponsors and 200 topics (with their 20
// categories), drawn from the corpus's keys in windows that overlap from show to show (so a wide
// show's candidates are wide shows); and one episode carrying the corpus's most held keys, as many
// as an episode may. Rows are written straight into the read models, as the projections would hold
// them. Measures, through the real routes (fastify inject, response cache off, one request at a
// time, BENCH_REQUESTS each, 3 by default): wall time and the api process's CPU of the guest's show
// recommendations, GET /v1/podcasts/{id} of a wide show, the related episodes of a wide episode
// and those of the episode of most held keys. BENCH_SCHEMA keeps (and reuses) the data.
import { randomBytes } from 'node:crypto';
import { migrate } from '../../src/db/migrate.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { advertisingApp } from './app.ts';
import { generateCorpus } from './generate.ts';

const BASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3);
const NOW = new Date('2026-11-20T12:00:00Z');
const WIDE = 60;
const EPISODES = 5;
const kept = process.env.BENCH_SCHEMA;
const schema = kept ?? `bench_wide_${randomBytes(4).toString('hex')}`;

const admin = openPostgres({ connectionString: BASE_URL, max: 1 });
await admin.query(`create schema if not exists ${schema}`);
const db = openPostgres({ connectionString: BASE_URL, schema, max: 10 });
await migrate(db);

const { rows: existing } = await db.query<{ n: number }>(
  "select count(*)::int as n from podcast_links where podcast_id = 'wide-0'",
);
if (existing[0]!.n === 0) {
  const started = performance.now();
  await generateCorpus(
    db,
    {
      podcasts: 10_000,
      episodesPerPodcast: 20,
      ads: 500_000,
      sponsors: 5_000,
      companies: 2_000,
      guests: 50_000,
      topics: 200,
      publishers: 500,
    },
    NOW,
  );
  await db.query(
    `insert into podcasts (id, title, slug, popularity, publisher, search_title, field_times)
     select 'wide-' || s, 'Wide ' || s, 'wide-' || s, 0.5, '{"id": "pub-wide", "name": "Wide"}'::jsonb, 'wide ' || s,
            '{}'::jsonb
       from generate_series(0, $1::int - 1) s
     union all select 'wide-spread', 'Spread', 'wide-spread', 0.5, null::jsonb, 'spread', '{}'::jsonb`,
    [WIDE],
  );
  await db.query(
    `insert into catalog_episodes (id, podcast_id, title, search_title, duration_seconds, published_at,
                                   has_transcript, entity_count, clip_count, segment_count, entity_ids,
                                   speakers, topics, videos)
     select 'wide-' || s || '-ep-' || e, 'wide-' || s, 'Wide episode', 'wide episode', 3600,
            $3::timestamptz - (e * 10 + s) * interval '1 hour', false, 0, 0, 0, '{}', '[]', '[]', '[]'
       from generate_series(0, $1::int - 1) s, generate_series(0, $2::int - 1) e`,
    [WIDE, EPISODES, NOW],
  );
  // Show s's window of keys starts s × 50 guests and s × 100 sponsors further along.
  await db.query(
    `insert into podcast_link_episodes (episode_id, podcast_id, kind, key, label, published_at)
     select 'wide-' || s || '-ep-' || e, 'wide-' || s, k.kind, k.key, k.label,
            $3::timestamptz - (e * 10 + s) * interval '1 hour'
       from generate_series(0, $1::int - 1) s, generate_series(0, $2::int - 1) e,
            lateral (select 'guest', 'wide-guest', 'Wide Guest'
                     union all select 'guest', 'person-' || (s * 50 + j), 'Guest ' || (s * 50 + j)
                       from generate_series(0, 498) j
                     union all select 'sponsor', 'sp-' || (s * 100 + j) % 5000, 'Sponsor ' || (s * 100 + j) % 5000
                       from generate_series(0, 999) j
                     union all select 'topic', 'topic-' || t,
                                      jsonb_build_object('name', 'Topic ' || t, 'slug', 'topic-' || t,
                                                         'ancestry', 'cat-' || (t % 20) || '/topic-' || t)::text
                       from generate_series(0, 199) t
                     union all select 'category', 'cat-' || c, null from generate_series(0, 19) c) k(kind, key, label)`,
    [WIDE, EPISODES, NOW],
  );
  // One more episode, of its own show, carrying the corpus's most held keys: each brings its own
  // 100 candidates rather than the wide episodes again.
  await db.query(
    `insert into catalog_episodes (id, podcast_id, title, search_title, duration_seconds, published_at,
                                   has_transcript, entity_count, clip_count, segment_count, entity_ids,
                                   speakers, topics, videos)
     values ('spread-ep', 'wide-spread', 'Spread episode', 'spread episode', 3600, $1::timestamptz, false, 0, 0, 0,
             '{}', '[]', '[]', '[]')`,
    [NOW],
  );
  await db.query(
    `insert into podcast_link_episodes (episode_id, podcast_id, kind, key, label, published_at)
     select 'spread-ep', 'wide-spread', kind, key, label, $1::timestamptz
       from (select kind, key, max(label) as label, row_number() over (partition by kind order by count(*) desc, key) as r
               from podcast_link_episodes where podcast_id not like 'wide-%' and kind <> 'category'
              group by kind, key) x
      where r <= case kind when 'guest' then 500 when 'sponsor' then 1000 else 200 end`,
    [NOW],
  );
  await db.query(
    `insert into podcast_links (podcast_id, kind, key, label, episode_count, last_at)
     select podcast_id, kind, key, max(label), count(*)::int, max(published_at)
       from podcast_link_episodes where podcast_id like 'wide-%' group by podcast_id, kind, key`,
  );
  for (const table of ['podcasts', 'catalog_episodes', 'podcast_links', 'podcast_link_episodes'])
    await db.query(`vacuum analyze ${table}`);
  console.log(`generated in ${((performance.now() - started) / 1000).toFixed(1)} s`);
} else console.log(`reusing schema ${schema}`);

const { app, headers } = await advertisingApp(db, NOW);

async function measure(label: string, urlOf: (i: number) => string) {
  // One unmeasured request of another id compiles the route's schemas and warms the connections.
  for (let i = -1; i < REQUESTS; i++) {
    const cpu = process.cpuUsage();
    const t = performance.now();
    const response = await app.inject({ url: urlOf(i), headers });
    const wall = performance.now() - t;
    const used = process.cpuUsage(cpu);
    if (response.statusCode !== 200) throw new Error(`${label}: ${response.statusCode} ${response.body}`);
    const body = response.json() as { data?: unknown[]; related?: unknown[] };
    if (i >= 0)
      console.log(
        `${label} ${urlOf(i)}: ${(wall / 1000).toFixed(2)} s, api CPU ${((used.user + used.system) / 1e6).toFixed(2)} s, ` +
          `${(body.data ?? body.related)?.length} items`,
      );
  }
}

await measure('guest show recommendations', () => '/v1/podcasts/guests/wide-guest/recommendations/podcasts');
await measure('podcast with extras', (i) => `/v1/podcasts/wide-${i + 1}`);
await measure('related episodes', (i) => `/v1/podcasts/episodes/wide-${i + 1}-ep-0/related`);
await measure('related episodes, most held keys', () => '/v1/podcasts/episodes/spread-ep/related');

await app.close();
await db.close();
if (!kept) await admin.query(`drop schema ${schema} cascade`);
await admin.close();
