// A generated advertising corpus written straight into the read models (the rows the ads,
// entities, podcasts and podcast_links projections would hold), so a million ads load in about a
// minute instead of replaying 200,000 episode events. The catalog bench's shape: 10,000 shows of
// 20 episodes over two years.
import type { Db } from '../../src/db/db.ts';

export interface CorpusSize {
  podcasts: number;
  episodesPerPodcast: number;
  ads: number;
  sponsors: number;
  companies: number;
  guests: number;
  topics: number;
  publishers: number;
}

const DAYS = 730;

export async function generateCorpus(
  db: Db,
  size: CorpusSize,
  end: Date,
  log: (line: string) => void = () => {},
) {
  let at = performance.now();
  const step = (what: string) => {
    log(`  ${what}: ${((performance.now() - at) / 1000).toFixed(1)} s`);
    at = performance.now();
  };
  const episodes = size.podcasts * size.episodesPerPodcast;
  const start = new Date(end.getTime() - DAYS * 86_400_000).toISOString();
  await db.query('select setseed(0.2026)');
  await db.query(
    `insert into podcasts (id, title, slug, popularity, publisher, search_title, field_times)
     select 'pod-' || i, 'Show ' || i, 'show-' || i, random(),
            jsonb_build_object('id', 'pub-' || (i % $2::int), 'name', 'Publisher ' || (i % $2::int),
                               'slug', 'publisher-' || (i % $2::int)),
            'show ' || i, '{}'::jsonb
       from generate_series(0, $1::int - 1) i`,
    [size.podcasts, size.publishers],
  );
  step('podcasts');
  await db.query(
    `insert into entities (id, slug, name, entity_type, company, occurred_at, search_names, search_text)
     select 'co-' || i, 'company-' || i, 'Company ' || i, 'COMPANY',
            jsonb_build_object('domain', 'company' || i || '.example', 'ticker', 'C' || i), now(),
            array['company ' || i], 'company ' || i
       from generate_series(0, $1::int - 1) i`,
    [size.companies],
  );
  step('companies');
  // Each ad's episode is ad / (ads per episode); 70% of ads come from the show's pool of eight
  // regular sponsors, 30% from a skewed global draw; 5% are network promos.
  await db.query(
    `with draws as (
       select a, (a::bigint * $2::int / $1::int)::int as e, random() as r1, random() as r2, random() as r3,
              random() as r4, random() as r5
         from generate_series(0, $1::int - 1) a
     ), placed as (
       select a, e, e / $6::int as p, r3, r4, r5,
              case when r1 < 0.7 then ((e / $6::int) * 37 + floor(r2 * 8)::int * 101) % $3::int
                   else floor($3::int * power(r2, 3))::int end as s
         from draws
     )
     insert into ads (id, episode_id, podcast_id, published_at, sponsor_id, sponsor_name, sponsor_company_id,
                      read_type, placement_type, start_seconds, end_seconds, is_network_promo)
     select 'ad-' || a, 'ep-' || e, 'pod-' || p,
            $5::timestamptz + ((e::bigint * 7919) % ${DAYS}) * interval '1 day' + (e % 86400) * interval '1 second',
            'sp-' || s, 'Sponsor ' || s, 'co-' || (s % $4::int),
            case when r3 < 0.6 then 'HOST_READ' else 'PRE_RECORDED' end,
            (array['PRE_ROLL', 'MID_ROLL', 'POST_ROLL'])[1 + floor(r4 * 3)::int],
            0, 30, r5 < 0.05
       from placed`,
    [size.ads, episodes, size.sponsors, size.companies, start, size.episodesPerPodcast],
  );
  step('ads');
  await db.query(
    `insert into ad_keys (kind, key)
     select 'sponsor', 'sp-' || i from generate_series(0, $1::int - 1) i
     union all select 'podcast', 'pod-' || i from generate_series(0, $2::int - 1) i`,
    [size.sponsors, size.podcasts],
  );
  await db.query(
    `insert into ad_facts (episode_id, sponsor_no, podcast_no, published_at, company_id, ads)
     select a.episode_id, s.no, p.no, a.published_at, max(a.sponsor_company_id), count(*)::int
       from ads a join ad_keys s on s.kind = 'sponsor' and s.key = a.sponsor_id
       join ad_keys p on p.kind = 'podcast' and p.key = a.podcast_id
      where not a.is_network_promo
      group by a.episode_id, s.no, p.no, a.published_at`,
  );
  step('ad facts');
  const published = `$1::timestamptz + ((e::bigint * 7919) % ${DAYS}) * interval '1 day' + (e % 86400) * interval '1 second'`;
  await db.query(
    `insert into podcast_link_episodes (episode_id, podcast_id, kind, key, label, published_at)
     select distinct on (episode_id, sponsor_id) episode_id, podcast_id, 'sponsor', sponsor_id, sponsor_name, published_at
       from ads where not is_network_promo order by episode_id, sponsor_id`,
  );
  step('sponsor links');
  await db.query(
    `insert into podcast_link_episodes (episode_id, podcast_id, kind, key, label, published_at)
     select distinct on (e, g) 'ep-' || e, 'pod-' || (e / $3::int), 'guest', 'person-' || g, 'Guest ' || g, ${published}
       from (select e, floor($2::int * power(random(), 1.5))::int as g, random() as keep
               from generate_series(0, $4::int - 1) e, generate_series(1, 2) n) d
      where keep < 0.6
      order by e, g`,
    [new Date(end.getTime() - DAYS * 86_400_000), size.guests, size.episodesPerPodcast, episodes],
  );
  step('guest links');
  await db.query(
    `insert into podcast_link_episodes (episode_id, podcast_id, kind, key, label, published_at)
     select distinct on (e, kind, key) 'ep-' || e, 'pod-' || (e / $3::int), kind, key, label, ${published}
       from (select e, ((e / $3::int) * 3 + (e + n) % 3) % $2::int as t, n
               from generate_series(0, $4::int - 1) e, generate_series(0, 1) n) d,
            lateral (values ('topic', 'topic-' || t,
                             jsonb_build_object('name', 'Topic ' || t, 'slug', 'topic-' || t,
                                                'ancestry', 'cat-' || (t % 20) || '/topic-' || t)::text),
                            ('category', 'cat-' || (t % 20), null)) v(kind, key, label)
      order by e, kind, key`,
    [new Date(end.getTime() - DAYS * 86_400_000), size.topics, size.episodesPerPodcast, episodes],
  );
  step('topic links');
  await db.query(
    `insert into podcast_links (podcast_id, kind, key, label, episode_count, last_at)
     select podcast_id, kind, key, max(label), count(*)::int, max(published_at)
       from podcast_link_episodes group by podcast_id, kind, key
     on conflict do nothing`,
  );
  step('show links');
  // Bulk-loaded tables have no visibility map yet; autovacuum would set it on a live system, and
  // index-only scans need it.
  for (const table of [
    'ads',
    'ad_facts',
    'ad_keys',
    'podcast_links',
    'podcast_link_episodes',
    'podcasts',
    'entities',
  ])
    await db.query(`vacuum analyze ${table}`);
  step('vacuum analyze');
}
