import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogEpisodesProjection } from '../../projections/catalog-episodes/projection.ts';
import { rebuildProjection } from '../../src/subscriptions/projection-runner.ts';
import { ENGINES } from '../support/db.ts';
import { type CatalogHarness, catalogHarness, episodeOf, podcastEvent } from './support.ts';

const AI = {
  id: 'top-ai',
  name: 'Artificial Intelligence',
  slug: 'artificial-intelligence',
  ancestry: 'technology/artificial-intelligence',
};
const CHIPS = { id: 'top-chips', name: 'Chips', slug: 'chips', ancestry: 'technology/chips' };
const COOKING = { id: 'top-cook', name: 'Cooking', slug: 'cooking', ancestry: 'food/cooking' };

describe('podcasts read model and endpoints', () => {
  let h: CatalogHarness;

  beforeAll(async () => {
    h = await catalogHarness('postgres');
    await h.ingest([
      podcastEvent({
        id: 'pod-ai',
        title: 'The AI Hour',
        slug: 'the-ai-hour',
        description: 'Weekly conversations about machine learning research.',
        language: 'en-US',
        popularity: 0.9,
        suitability_tier: 'SAFE',
        directory_ids: { apple: '1200361736', spotify: 'sp-ai' },
        publisher: { id: 'pub-1', name: 'Hour Media', slug: 'hour-media' },
        topics: [AI],
      }),
      podcastEvent({
        id: 'pod-chef',
        title: 'Chef Talk',
        slug: 'chef-talk',
        language: 'fr',
        popularity: 0.5,
      }),
      podcastEvent({ id: 'pod-quiet', title: 'Quiet Corner', language: 'en', suitability_tier: 'LIMITED' }),
      // pod-ai: 5 episodes, 4 about AI and 1 about chips (20%), all with guests.
      ...[1, 2, 3, 4, 5].map((n) =>
        episodeOf({
          id: `ai-${n}`,
          podcastId: 'pod-ai',
          podcastTitle: 'The AI Hour',
          title: n === 1 ? 'Scaling laws with a chip designer' : `AI episode ${n}`,
          publishedAt: `2026-11-${String(n + 10).padStart(2, '0')}T06:00:00Z`,
          roles: ['HOST', 'GUEST'],
          topics: n === 5 ? [CHIPS] : [AI],
          ads: 1,
        }),
      ),
      // pod-chef: 10 episodes, 1 about chips (10%: below the 20% rule), solo.
      ...Array.from({ length: 10 }, (_, i) =>
        episodeOf({
          id: `chef-${i}`,
          podcastId: 'pod-chef',
          podcastTitle: 'Chef Talk',
          publishedAt: `2026-06-${String(i + 1).padStart(2, '0')}T06:00:00Z`,
          durationSeconds: 1200,
          roles: ['HOST'],
          topics: i === 0 ? [CHIPS] : [COOKING],
        }),
      ),
    ]);
  });
  afterAll(() => h.close());

  it('resolves a podcast by id, slug and Apple id, and answers 404 podcast_not_found otherwise', async () => {
    for (const ref of ['pod-ai', 'the-ai-hour', '1200361736']) {
      const res = await h.get(`/v1/podcasts/${ref}`);
      expect(res.statusCode).toBe(200);
      expect(res.json().id).toBe('pod-ai');
    }
    const missing = await h.get('/v1/podcasts/nope');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error_code).toBe('podcast_not_found');
  });

  it('serves a podcast with publisher, directory ids, topics with episode counts and its compact format', async () => {
    const body = (await h.get('/v1/podcasts/pod-ai')).json();
    expect(body).toMatchObject({
      id: 'pod-ai',
      title: 'The AI Hour',
      explicit: false,
      slug: 'the-ai-hour',
      language: 'en-US',
      popularity: 0.9,
      episode_count: 5,
      publisher: { id: 'pub-1', name: 'Hour Media', slug: 'hour-media' },
      directory_ids: { apple: '1200361736', spotify: 'sp-ai' },
      format: {
        has_video: false,
        guest_frequency: 'always',
        has_ads: true,
        publishing_status: 'active',
        signals: ['interview'],
      },
    });
    expect(body.topics[0]).toMatchObject({
      id: 'top-ai',
      episode_count: 4,
      ancestry: 'technology/artificial-intelligence',
    });
    expect(body.topics[0].ancestry_path).toMatch(/^[0-9a-f]{16}$/);
    expect(body.topics.map((t: { id: string }) => t.id)).toEqual(['top-ai', 'top-chips']);
    const limited = (await h.get('/v1/podcasts/pod-ai', { topic_limit: '1' })).json();
    expect(limited.topics).toHaveLength(1);
  });

  it('lists podcasts most popular first, non-charting last, across pages with signed cursors', async () => {
    const first = (await h.get('/v1/podcasts', { limit: '2' })).json();
    expect(first.data.map((p: { id: string }) => p.id)).toEqual(['pod-ai', 'pod-chef']);
    expect(first.has_more).toBe(true);
    const second = (await h.get('/v1/podcasts', { limit: '2', cursor: first.cursor })).json();
    expect(second).toEqual({ data: [expect.objectContaining({ id: 'pod-quiet' })], has_more: false });
    const replayed = await h.get('/v1/podcasts', { limit: '2', cursor: first.cursor, language: 'fr' });
    expect(replayed.statusCode).toBe(400);
    expect(replayed.json().error_code).toBe('invalid_cursor');
  });

  it('filters by language on the primary subtag, suitability tier, popularity and slug', async () => {
    const ids = async (query: Record<string, string>) =>
      (await h.get('/v1/podcasts', query)).json().data.map((p: { id: string }) => p.id);
    expect(await ids({ language: 'en' })).toEqual(['pod-ai', 'pod-quiet']);
    expect(await ids({ language: 'FR' })).toEqual(['pod-chef']);
    expect(await ids({ suitability_tier: 'LIMITED' })).toEqual(['pod-quiet']);
    expect(await ids({ min_popularity: '0.6' })).toEqual(['pod-ai']);
    expect(await ids({ min_popularity: '0' })).toEqual(['pod-ai', 'pod-chef', 'pod-quiet']);
    expect(await ids({ slug: 'chef-talk' })).toEqual(['pod-chef']);
  });

  it('filters by format: guest frequency, signals, ads, minutes, episodes per week and publishing status', async () => {
    const ids = async (query: Record<string, string>) =>
      (await h.get('/v1/podcasts', query)).json().data.map((p: { id: string }) => p.id);
    expect(await ids({ guest_frequency: 'always' })).toEqual(['pod-ai']);
    expect(await ids({ guest_frequency: 'never,rare' })).toEqual(['pod-chef']);
    expect(await ids({ format_signals: 'solo_narrated' })).toEqual(['pod-chef']);
    expect(await ids({ format_signals: 'panel,interview' })).toEqual(['pod-ai']);
    expect(await ids({ has_ads: 'true' })).toEqual(['pod-ai']);
    expect(await ids({ has_ads: 'false' })).toEqual(['pod-chef']);
    expect(await ids({ max_avg_episode_minutes: '30' })).toEqual(['pod-chef']);
    expect(await ids({ min_avg_episode_minutes: '30' })).toEqual(['pod-ai']);
    expect(await ids({ publishing_status: 'active' })).toEqual(['pod-ai']);
    expect(await ids({ publishing_status: 'dormant' })).toEqual(['pod-chef']);
    // pod-ai is briefly tracked (first episode 9 days before NOW): kept out of per-week filters.
    expect(await ids({ min_episodes_per_week: '0' })).toEqual(['pod-chef']);
    expect(await ids({ max_episodes_per_week: '0' })).toEqual(['pod-chef']);
    expect(await ids({ has_video: 'false' })).toEqual(['pod-ai', 'pod-chef', 'pod-quiet']);
  });

  it('matches topic_id by id, ancestry slug, a parent ancestry or the path hash, at 20% of episodes or more', async () => {
    const ids = async (topic: string) =>
      (await h.get('/v1/podcasts', { topic_id: topic })).json().data.map((p: { id: string }) => p.id);
    expect(await ids('top-ai')).toEqual(['pod-ai']);
    expect(await ids('technology/artificial-intelligence')).toEqual(['pod-ai']);
    const hash = (await h.get('/v1/podcasts/pod-ai')).json().topics[0].ancestry_path;
    expect(await ids(hash)).toEqual(['pod-ai']);
    // chips: 1 of 5 (20%) on pod-ai matches; 1 of 10 on pod-chef does not.
    expect(await ids('top-chips')).toEqual(['pod-ai']);
    expect(await ids('technology')).toEqual(['pod-ai']);
    expect(await ids('food')).toEqual(['pod-chef']);
    expect(await ids('nothing-like-it')).toEqual([]);
  });

  it('ranks topic matches by concentration unless sort=popularity', async () => {
    await h.ingest([
      podcastEvent({ id: 'pod-food2', title: 'Food Weekly', popularity: 0.99 }),
      episodeOf({ id: 'fw-1', podcastId: 'pod-food2', topics: [COOKING] }),
      episodeOf({ id: 'fw-2', podcastId: 'pod-food2', topics: [AI] }),
    ]);
    const ids = async (query: Record<string, string>) =>
      (await h.get('/v1/podcasts', query)).json().data.map((p: { id: string }) => p.id);
    // pod-chef: 9 of 10 cooking; pod-food2: 1 of 2.
    expect(await ids({ topic_id: 'top-cook' })).toEqual(['pod-chef', 'pod-food2']);
    expect(await ids({ topic_id: 'top-cook', sort: 'popularity' })).toEqual(['pod-food2', 'pod-chef']);
  });

  it("moves a show's topic share when a re-sent episode changes its topics, and matches declared topics of shows without episode topics", async () => {
    await h.ingest([
      podcastEvent({ id: 'pod-bake', title: 'Bake Off Talk', topics: [{ ...COOKING, id: 'top-bake' }] }),
      podcastEvent({
        id: 'pod-declared',
        title: 'Declared Only',
        topics: [{ id: 'top-pastry', name: 'Pastry', ancestry: 'food/baking/pastry' }],
      }),
      episodeOf({ id: 'bk-1', podcastId: 'pod-bake', topics: [AI] }),
      episodeOf({ id: 'bk-2', podcastId: 'pod-bake', topics: [AI] }),
    ]);
    const ids = async (topic: string) =>
      (await h.get('/v1/podcasts', { topic_id: topic })).json().data.map((p: { id: string }) => p.id);
    // pod-bake's own episodes carry topics, so its declared cooking topic does not count.
    expect(await ids('food/cooking')).not.toContain('pod-bake');
    expect(await ids('food/baking')).toEqual(['pod-declared']);
    expect(await ids('top-pastry')).toEqual(['pod-declared']);
    await h.ingest([
      episodeOf({ id: 'bk-2', podcastId: 'pod-bake', topics: [COOKING], occurredAt: '2026-11-20T11:00:00Z' }),
    ]);
    expect(await ids('food/cooking')).toContain('pod-bake');
    await h.ingest([
      episodeOf({ id: 'bk-2', podcastId: 'pod-bake', topics: [AI], occurredAt: '2026-11-20T12:00:00Z' }),
    ]);
    expect(await ids('food/cooking')).not.toContain('pod-bake');
  });

  it('keeps topic shares equal to a recount when an episode moves to another show, and a rebuild equal to live', async () => {
    await h.ingest([
      podcastEvent({ id: 'pod-move-a', title: 'Move From' }),
      podcastEvent({ id: 'pod-move-b', title: 'Move To' }),
      episodeOf({ id: 'mv-1', podcastId: 'pod-move-a', topics: [COOKING] }),
      episodeOf({ id: 'mv-2', podcastId: 'pod-move-a', topics: [COOKING, AI] }),
    ]);
    await h.ingest([
      episodeOf({
        id: 'mv-2',
        podcastId: 'pod-move-b',
        topics: [AI],
        occurredAt: '2026-11-20T11:00:00Z',
      }),
    ]);
    type Share = { ancestry: string; podcast_id: string; episode_count: number };
    const shares = async () =>
      (
        await h.db.query<Share>(
          'select ancestry, podcast_id, episode_count from podcast_topic_shares order by ancestry, podcast_id',
        )
      ).rows;
    const recount = async () =>
      (
        await h.db.query<Share>(
          `select prefix as ancestry, t.podcast_id, count(distinct t.episode_id)::int as episode_count
             from catalog_episode_topics t, unnest(topic_prefixes(array[t.ancestry])) prefix
            group by prefix, t.podcast_id order by 1, 2`,
        )
      ).rows;
    const live = await shares();
    expect(live.filter((r) => r.podcast_id === 'pod-move-a')).toEqual([
      { ancestry: 'food', podcast_id: 'pod-move-a', episode_count: 1 },
      { ancestry: 'food/cooking', podcast_id: 'pod-move-a', episode_count: 1 },
    ]);
    const moved = live.filter((r) => r.podcast_id === 'pod-move-b');
    expect(moved.map((r) => r.ancestry)).toContain(AI.ancestry);
    expect(moved.every((r) => r.episode_count === 1 && !r.ancestry.startsWith('food'))).toBe(true);
    expect(live).toEqual(await recount());
    await rebuildProjection(h.db, h.store, catalogEpisodesProjection);
    expect(await shares()).toEqual(live);
  });

  it('looks podcasts up by Apple and other directory ids, keeping unknown identifiers', async () => {
    const res = await h.get('/v1/podcasts/lookup', { platform: 'apple', identifier: '1200361736,999' });
    expect(res.statusCode).toBe(200);
    expect(res.json().results).toEqual([
      { identifier: '1200361736', podcast: expect.objectContaining({ id: 'pod-ai' }) },
      { identifier: '999' },
    ]);
    const spotify = (await h.get('/v1/podcasts/lookup', { platform: 'spotify', identifier: 'sp-ai' })).json();
    expect(spotify.results[0].podcast.id).toBe('pod-ai');
  });

  it('lets the later occurred_at win between podcast.upserted and an episode podcast block, field by field', async () => {
    await h.ingest([
      podcastEvent(
        { id: 'pod-merge', title: 'Old Title', description: 'Kept', popularity: 0.3 },
        '2026-11-10T00:00:00Z',
      ),
      {
        ...episodeOf({ id: 'merge-1', podcastId: 'pod-merge', occurredAt: '2026-11-12T00:00:00Z' }),
        podcast: { id: 'pod-merge', title: 'New Title', popularity: 0.6 },
      },
      podcastEvent({ id: 'pod-merge', title: 'Stale Title', popularity: 0.1 }, '2026-11-11T00:00:00Z'),
    ]);
    const body = (await h.get('/v1/podcasts/pod-merge')).json();
    expect(body).toMatchObject({ title: 'New Title', popularity: 0.6, description: 'Kept' });
  });

  it('answers the Limits table with 400 problems naming the parameter, and min above max with 422', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ q: 'x'.repeat(201) }, 'query.q'],
      [{ slug: 's'.repeat(201) }, 'query.slug'],
      [{ guest_frequency: 'never,rare,occasional,regular,always,never' }, 'query.guest_frequency'],
      [{ guest_frequency: 'sometimes' }, 'query.guest_frequency'],
      [{ format_signals: 'interview,panel,call_in,solo_narrated,interview' }, 'query.format_signals'],
      [{ min_avg_episode_minutes: '-1' }, 'query.min_avg_episode_minutes'],
      [{ max_avg_episode_minutes: '10081' }, 'query.max_avg_episode_minutes'],
      [{ min_popularity: '1.5' }, 'query.min_popularity'],
      [{ min_episodes_per_week: '-0.5' }, 'query.min_episodes_per_week'],
      [{ limit: '101' }, 'query.limit'],
      [{ limit: '0' }, 'query.limit'],
      [{ sort: 'newest' }, 'query.sort'],
      [{ publishing_status: 'paused' }, 'query.publishing_status'],
      [{ language: 'english' }, 'query.language'],
    ];
    for (const [query, location] of cases) {
      const res = await h.get('/v1/podcasts/search', query);
      expect(res.statusCode, JSON.stringify(query)).toBe(400);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.json().error_code).toBe('invalid_parameter');
      expect(res.json().errors.map((e: { location: string }) => e.location)).toContain(location);
    }
    expect(
      (await h.get('/v1/podcasts', { guest_frequency: 'never,rare,occasional,regular,always' })).statusCode,
    ).toBe(200);
    expect(
      (await h.get('/v1/podcasts', { format_signals: 'interview,panel,call_in,solo_narrated' })).statusCode,
    ).toBe(200);
    expect((await h.get('/v1/podcasts', { q: 'x'.repeat(200) })).statusCode).toBe(200);
    expect((await h.get('/v1/podcasts', { max_avg_episode_minutes: '10080' })).statusCode).toBe(200);
    const range = await h.get('/v1/podcasts', {
      min_avg_episode_minutes: '60',
      max_avg_episode_minutes: '30',
    });
    expect(range.statusCode).toBe(422);
    expect(range.json().errors[0].location).toBe('query.min_avg_episode_minutes');
  });

  it("lists a podcast's episodes newest first, by title substring and publish dates, across pages", async () => {
    const page1 = (await h.get('/v1/podcasts/the-ai-hour/episodes', { limit: '2' })).json();
    expect(page1.data.map((e: { id: string }) => e.id)).toEqual(['ai-5', 'ai-4']);
    expect(page1.data[0]).toMatchObject({
      title: 'AI episode 5',
      duration_seconds: 3600,
      explicit: false,
      has_transcript: true,
      podcast: { id: 'pod-ai', title: 'The AI Hour', slug: 'the-ai-hour' },
    });
    const page2 = (
      await h.get('/v1/podcasts/the-ai-hour/episodes', { limit: '2', cursor: page1.cursor })
    ).json();
    const page3 = (
      await h.get('/v1/podcasts/the-ai-hour/episodes', { limit: '2', cursor: page2.cursor })
    ).json();
    expect([...page2.data, ...page3.data].map((e: { id: string }) => e.id)).toEqual(['ai-3', 'ai-2', 'ai-1']);
    expect(page3.has_more).toBe(false);
    const titled = (await h.get('/v1/podcasts/pod-ai/episodes', { title: 'CHIP' })).json();
    expect(titled.data.map((e: { id: string }) => e.id)).toEqual(['ai-1']);
    const dated = (
      await h.get('/v1/podcasts/pod-ai/episodes', {
        published_after: '2026-11-12',
        published_before: '2026-11-14T06:00:00Z',
      })
    ).json();
    expect(dated.data.map((e: { id: string }) => e.id)).toEqual(['ai-3', 'ai-2']);
    expect((await h.get('/v1/podcasts/pod-ai/episodes', { title: 't'.repeat(201) })).statusCode).toBe(400);
    expect((await h.get('/v1/podcasts/pod-ai/episodes', { published_after: 'yesterday' })).statusCode).toBe(
      400,
    );
    expect((await h.get('/v1/podcasts/nope/episodes')).json().error_code).toBe('podcast_not_found');
  });

  it('serves the format profile and 404 format_not_computed for a show with no episodes', async () => {
    const format = await h.get('/v1/podcasts/pod-chef/format');
    expect(format.statusCode).toBe(200);
    expect(format.json()).toMatchObject({
      analyzed_episodes: 10,
      episode_count: 10,
      publishing_status: 'dormant',
    });
    const none = await h.get('/v1/podcasts/pod-quiet/format');
    expect(none.statusCode).toBe(404);
    expect(none.json().error_code).toBe('format_not_computed');
    expect((await h.get('/v1/podcasts/nope/format')).json().error_code).toBe('podcast_not_found');
  });

  it('routes the static paths (search, lookup, episodes) before podcast ids', async () => {
    expect((await h.get('/v1/podcasts/search')).statusCode).toBe(200);
    expect((await h.get('/v1/podcasts/lookup', { platform: 'apple', identifier: '1' })).statusCode).toBe(200);
    expect((await h.get('/v1/podcasts/episodes')).statusCode).toBe(200);
  });

  it('lists every catalog route in /openapi.json with its query schema', async () => {
    const spec = (await h.app.inject({ url: '/openapi.json' })).json() as {
      paths: Record<string, { get?: { parameters?: { name: string }[] } }>;
    };
    for (const path of [
      '/v1/podcasts',
      '/v1/podcasts/search',
      '/v1/podcasts/lookup',
      '/v1/podcasts/{id}',
      '/v1/podcasts/{id}/format',
      '/v1/podcasts/{id}/episodes',
      '/v1/podcasts/episodes',
      '/v1/podcasts/episodes/{id}',
      '/v1/podcasts/episodes/{id}/transcript',
      '/v1/podcasts/episodes/{id}/segments',
      '/v1/podcasts/segments',
      '/v1/podcasts/segments/{id}',
      '/v1/podcasts/segments/{id}/transcript',
      '/v1/podcasts/clips',
      '/v1/podcasts/clips/{id}',
      '/v1/podcasts/clips/{id}/transcript',
      '/v1/embed/clips/{id}/transcript',
    ])
      expect(spec.paths[path]?.get, path).toBeDefined();
    const names = spec.paths['/v1/podcasts']!.get!.parameters!.map((p) => p.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'q',
        'topic_id',
        'guest_frequency',
        'max_avg_episode_minutes',
        'limit',
        'cursor',
      ]),
    );
  });
});

describe.each(ENGINES)("a show's item whatever the session's time zone, on %s", (engine) => {
  let h: CatalogHarness;

  beforeAll(async () => {
    // East of UTC the last instant callers may send (docs/api-conventions.md) is in year 10000 locally.
    h = await catalogHarness(engine, undefined, 'Europe/Berlin');
    await h.ingest([
      podcastEvent({ id: 'pod-far', title: 'Far Future' }),
      episodeOf({ id: 'far-1', podcastId: 'pod-far', publishedAt: '9999-12-31T23:30:00Z', roles: ['HOST'] }),
    ]);
  });
  afterAll(() => h.close());

  it('reads the format instants as the full profile does: active, briefly tracked', async () => {
    const profile = (await h.get('/v1/podcasts/pod-far/format')).json();
    expect(profile).toMatchObject({
      publishing_status: 'active',
      latest_episode_published_at: '9999-12-31T23:30:00.000Z',
    });
    expect(profile.episodes_per_week).toBeUndefined();
    const item = (await h.get('/v1/podcasts/pod-far')).json();
    expect(item.format).toEqual({ has_video: false, avg_episode_minutes: 60, publishing_status: 'active' });
    const [listed] = (await h.get('/v1/podcasts')).json().data;
    expect(listed.format).toEqual(item.format);
  });
});
