// The podcast lists (and the routes that read the same items) answer byte for byte what they
// answered before the list read model (docs/catalog.md, "The list read model"): every page of
// many filters, sorts and searches over a generated catalog is compared, by its SHA-256, with the
// answers recorded from the statement the read model replaced. Record again (only when an answer
// is meant to change, saying so in docs/) with RECORD_LIST_ANSWERS=1.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { podcastEvent as benchPodcast, episodeEvent } from '../../bench/catalog/synthetic.ts';
import type { IngestEvent } from '../../src/ingestion/events.ts';
import { ENGINES, type Engine } from '../support/db.ts';
import { type CatalogHarness, catalogHarness, episodeOf, NOW, podcastEvent } from './support.ts';

const ANSWERS = new URL('./podcast-list-answers.json', import.meta.url);
const RECORD = process.env.RECORD_LIST_ANSWERS === '1';
const DAY = 86_400_000;

/**
 * 120 generated shows (every fourth without popularity, five languages, topics under five roots),
 * their episodes published up to a year before NOW so some shows are dormant or briefly tracked,
 * and hand-made shows for what the generator lacks: declared topics only, no episodes, videos.
 */
function catalog(): IngestEvent[] {
  const events: IngestEvent[] = [];
  for (let p = 0; p < 120; p++) {
    events.push(benchPodcast(p));
    const age = p % 6 === 0 ? 200 : p % 11 === 0 ? 385 - 7 * 8 : 0;
    const episodes = p % 11 === 0 ? 2 : 3 + (p % 9);
    for (let n = 0; n < episodes; n++)
      events.push(
        episodeEvent(p, n, p % 2 === 0 && n % 2 === 0 ? 3 : 0, new Date(NOW.getTime() - age * DAY)),
      );
  }
  const declared = [{ id: 'topic-food', name: 'Food', slug: 'food', ancestry: 'culture/food' }];
  events.push(
    podcastEvent({
      id: 'decl-1',
      title: 'Kitchen Stories',
      language: 'en',
      popularity: 0.66,
      topics: declared,
    }),
    podcastEvent({
      id: 'decl-2',
      title: 'Kitchen Nightly',
      language: 'fr-FR',
      has_video: true,
      topics: declared,
    }),
    episodeOf({ id: 'decl-2-e1', podcastId: 'decl-2', podcastTitle: 'Kitchen Nightly', roles: ['HOST'] }),
    podcastEvent({ id: 'bare-1', title: 'Empty Hall', slug: 'pod-3', popularity: 0.2 }),
    episodeOf({
      id: 'vid-e1',
      podcastId: 'vid-1',
      podcastTitle: 'Video Lab',
      videos: 1,
      roles: ['HOST', 'GUEST'],
      ads: 1,
    }),
  );
  return events;
}

const FILTERS: Record<string, string>[] = [
  {},
  { sort: 'popularity' },
  { language: 'en' },
  { language: 'FR' },
  { suitability_tier: 'SAFE' },
  { min_popularity: '0.4' },
  { guest_frequency: 'never,rare' },
  { guest_frequency: 'occasional,regular,always' },
  { format_signals: 'interview,panel' },
  { format_signals: 'call_in,solo_narrated' },
  { has_ads: 'true' },
  { has_ads: 'false' },
  { has_video: 'true' },
  { has_video: 'false' },
  { min_avg_episode_minutes: '40' },
  { max_avg_episode_minutes: '50', min_avg_episode_minutes: '20' },
  { min_episodes_per_week: '0.5' },
  { max_episodes_per_week: '0.3' },
  { publishing_status: 'active' },
  { publishing_status: 'dormant' },
  { slug: 'pod-3' },
  { topic_id: 'technology' },
  { topic_id: 'technology', sort: 'popularity' },
  { topic_id: 'science/news' },
  { topic_id: 'topic-culture-history' },
  { topic_id: 'culture' },
  { topic_id: 'culture/food' },
  { topic_id: 'topic-food', language: 'fr' },
  { topic_id: 'nothing-here' },
  {
    topic_id: 'business',
    language: 'en',
    min_popularity: '0.1',
    guest_frequency: 'occasional,regular,always',
    publishing_status: 'active',
  },
  {
    topic_id: 'sports',
    language: 'de',
    min_popularity: '0.3',
    guest_frequency: 'regular,always',
    publishing_status: 'active',
  },
  { topic_id: 'science', has_video: 'false', max_episodes_per_week: '1', sort: 'popularity' },
  { q: 'happy' },
  { q: 'the', sort: 'popularity' },
  { q: 'kitchen' },
  { q: 'kitchen stories' },
  { q: 'video lab podcast episodes' },
  { q: 'show about' },
  { q: 'happy', language: 'en', min_popularity: '0.2' },
  { q: 'the', topic_id: 'technology', publishing_status: 'active' },
];

/** Every page of each filter (7 shows a page, following the cursors), and the item routes. */
async function answers(h: CatalogHarness): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const record = (url: string, r: { statusCode: number; headers: Record<string, unknown>; body: string }) => {
    out[url] = createHash('sha256')
      .update(`${r.statusCode} ${r.headers['content-type']} ${r.headers.etag ?? ''}\n${r.body}`)
      .digest('hex');
  };
  for (const [i, filter] of FILTERS.entries()) {
    const path = i % 2 === 0 ? '/v1/podcasts' : '/v1/podcasts/search';
    let query: Record<string, string> = { ...filter, limit: '7' };
    for (let page = 0; page < 30; page++) {
      const r = await h.get(path, query);
      record(`${path}?${new URLSearchParams(query)}`, r);
      const cursor = r.statusCode === 200 ? r.json().cursor : undefined;
      if (!cursor) break;
      query = { ...filter, limit: '7', cursor };
    }
  }
  for (const url of [
    '/v1/podcasts/pod-1',
    '/v1/podcasts/decl-2',
    '/v1/podcasts/vid-1',
    '/v1/podcasts/bare-1',
  ])
    for (const topicLimit of ['0', '1', '10', '100']) {
      const query = { topic_limit: topicLimit };
      record(`${url}?${new URLSearchParams(query)}`, await h.get(url, query));
    }
  const lookup = { platform: 'apple', identifier: '1000001,1000002,1000003,404' };
  record(`/v1/podcasts/lookup?${new URLSearchParams(lookup)}`, await h.get('/v1/podcasts/lookup', lookup));
  return out;
}

const events = catalog();
const recorded: Partial<Record<Engine, Record<string, string>>> = RECORD
  ? {}
  : JSON.parse(readFileSync(ANSWERS, 'utf8'));

describe.each(ENGINES)('podcast list answers on %s', (engine) => {
  let h: CatalogHarness;
  beforeAll(async () => {
    h = await catalogHarness(engine);
    await h.ingest(events);
  }, 300_000);
  afterAll(async () => {
    await h.close();
    if (RECORD) writeFileSync(ANSWERS, `${JSON.stringify(recorded, null, 1)}\n`);
  });

  it('answers every page as recorded', { timeout: 300_000 }, async () => {
    const now = await answers(h);
    expect(Object.keys(now).length).toBeGreaterThan(150);
    if (RECORD) recorded[engine] = now;
    else expect(now).toEqual(recorded[engine]);
  });
});
