import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entityEvent, episodeEvent } from '../fixtures/events.ts';
import { companyReferences } from '../support/company-refs.ts';
import { ada, entities, epFox, epNear, epSg } from './fixture.ts';
import { type SearchHarness, searchHarness } from './support.ts';

const SEARCH = '/v1/podcasts/episodes/search';
const NVIDIA = { id: 'ent-nvidia', slug: 'nvidia', companyId: 'c-nvidia', domain: 'nvidia.com' };
let h: SearchHarness;

beforeAll(async () => {
  h = await searchHarness('postgres');
  await h.ingest([...entities, epFox, epSg, epNear]);
});
afterAll(() => h?.close());

const ids = async (query: Record<string, string>) => {
  const { status, body } = await h.json(SEARCH, query);
  expect(status).toBe(200);
  return body.data.map((item: { episode: { id: string } }) => item.episode.id);
};

describe('keyword search', () => {
  it('finds every word inside one passage of at most five lines, and not six lines apart', async () => {
    expect(await ids({ keyword_search: 'chips market' })).toEqual(['ep-near']);
  });

  it('ranks episodes holding any word when keyword_match=ranked, passages holding both first', async () => {
    const found = await ids({ keyword_search: 'chips market', keyword_match: 'ranked' });
    expect(found.at(-1)).toBe('ep-fox');
    expect([...found].sort()).toEqual(['ep-fox', 'ep-near', 'ep-sg']);
  });

  it('matches a quoted phrase word for word, in order, inside one line', async () => {
    expect(await ids({ keyword_search: '"quick brown"' })).toEqual(['ep-fox']);
    expect(await ids({ keyword_search: '"brown quick"' })).toEqual([]);
    expect(await ids({ keyword_search: '"fox it"' })).toEqual([]);
    expect(await ids({ keyword_search: '"brown dog"' })).toEqual([]);
    expect(await ids({ keyword_search: 'brown dog' })).toEqual(['ep-fox']);
  });

  it('ignores case and accents the way the matcher folds names', async () => {
    expect(await ids({ keyword_search: '"societe generale"' })).toEqual(['ep-sg']);
    expect(await ids({ keyword_search: 'SOCIÉTÉ générale' })).toEqual(['ep-sg']);
    const { body } = await h.json(SEARCH, { keyword_search: '"Société Générale"' });
    const matched = body.data[0].windows.flatMap((w: { lines: { number: number; is_match: boolean }[] }) =>
      w.lines.filter((l) => l.is_match).map((l) => l.number),
    );
    expect(matched).toEqual([2, 7]);
  });

  it('answers an item with the episode block, the segment and the clips of the best passage', async () => {
    const { body } = await h.json(SEARCH, { keyword_search: '"quick brown"' });
    const [item] = body.data;
    expect(item.episode).toMatchObject({
      id: 'ep-fox',
      podcast_id: 'pod-a',
      podcast_title: 'Chip Talk',
      published_at: '2026-10-05T08:00:00.000Z',
      podcast_popularity_badge: 'Very Popular',
    });
    expect(item.segment).toMatchObject({ id: 'seg-fox', type: 'TOPIC_DISCUSSION' });
    expect(item.clips.map((c: { id: string }) => c.id)).toEqual(['clip-fox']);
    expect(item.windows).toHaveLength(1);
    expect(
      item.windows[0].lines.map((l: { number: number; is_match: boolean }) => [l.number, l.is_match]),
    ).toEqual([
      [7, false],
      [8, false],
      [9, true],
      [10, false],
    ]);
    expect(item.match.source).toBe('keyword');
    expect(item.match.relevance_score).toBeGreaterThan(0);
  });

  it('sorts newest first with sort=recency and pages with a cursor', async () => {
    expect(await ids({ keyword_search: 'chips', sort: 'recency' })).toEqual(['ep-sg', 'ep-fox', 'ep-near']);
    const first = await h.json(SEARCH, { keyword_search: 'chips', sort: 'recency', limit: '2' });
    expect(first.body.has_more).toBe(true);
    const second = await h.json(SEARCH, {
      keyword_search: 'chips',
      sort: 'recency',
      limit: '2',
      cursor: first.body.cursor,
    });
    expect(second.body.data.map((i: { episode: { id: string } }) => i.episode.id)).toEqual(['ep-near']);
    expect(second.body.has_more).toBe(false);
    const other = await h.get(SEARCH, { keyword_search: 'fox', limit: '2', cursor: first.body.cursor });
    expect(other.statusCode).toBe(400);
  });
});

describe('filters', () => {
  it("lists an entity's episodes without keywords, newest first, windows around its mentions", async () => {
    const { body } = await h.json(SEARCH, { entity_slug: 'societe-generale' });
    expect(body.data.map((i: { episode: { id: string } }) => i.episode.id)).toEqual(['ep-sg']);
    const matched = body.data[0].windows.flatMap((w: { lines: { number: number; is_match: boolean }[] }) =>
      w.lines.filter((l) => l.is_match).map((l) => l.number),
    );
    expect(matched).toEqual([2, 7]);
    expect(body.data[0].match).toEqual({ source: 'keyword', relevance_score: 0 });
    const all = await h.json(SEARCH, { sort: 'recency' });
    expect(all.body.data.map((i: { episode: { id: string } }) => i.episode.id)).toEqual([
      'ep-sg',
      'ep-fox',
      'ep-near',
    ]);
    expect(all.body.data[0].windows).toEqual([]);
  });

  it('filters by entity: producer mentions, detected names and speakers', async () => {
    expect(await ids({ keyword_search: 'chips', entity_id: 'ent-nvidia' })).toEqual(['ep-fox']);
    expect(await ids({ keyword_search: 'chips', company_slug: 'nvidia' })).toEqual(['ep-fox']);
    expect(await ids({ keyword_search: 'chips', entity_slug: 'societe-generale' })).toEqual(['ep-sg']);
    expect(await ids({ keyword_search: 'chips', person_slug: 'jensen-huang' })).toEqual(['ep-fox']);
  });

  it('filters by the role the entity speaks in, case-insensitive', async () => {
    expect(await ids({ keyword_search: 'chips', person_slug: 'jensen-huang', role: 'guest' })).toEqual([
      'ep-fox',
    ]);
    expect(await ids({ keyword_search: 'chips', person_slug: 'jensen-huang', role: 'HOST' })).toEqual([]);
  });

  it('filters by entity type, podcast, episode, language and published range', async () => {
    expect(await ids({ keyword_search: 'chips', entity_type: 'company' })).toEqual(['ep-fox']);
    expect(await ids({ keyword_search: 'chips', podcast_id: 'chip-talk', sort: 'recency' })).toEqual([
      'ep-fox',
      'ep-near',
    ]);
    expect(await ids({ keyword_search: 'chips', episode_id: 'ep-near' })).toEqual(['ep-near']);
    expect(await ids({ keyword_search: 'chips', language: 'FR' })).toEqual(['ep-sg']);
    expect(await ids({ keyword_search: 'chips', since: '2026-10-01', sort: 'recency' })).toEqual([
      'ep-sg',
      'ep-fox',
    ]);
    expect(await ids({ keyword_search: 'chips', until: '2026-10-01' })).toEqual(['ep-near']);
  });

  it.each([
    [{ keyword_search: 'chips', language: 'de' }, 'language', { language: null }],
    [{ keyword_search: 'fox', podcast_id: 'marches' }, 'podcast_id', { podcast_id: null }],
    [{ keyword_search: 'fox', episode_id: 'ep-sg' }, 'episode_id', { episode_id: null }],
    [{ keyword_search: 'fox', since: '2026-11-01' }, 'since', { since: null }],
    [{ keyword_search: 'fox', until: '2026-10-01' }, 'until', { until: null }],
    [{ keyword_search: 'chips', person_slug: 'jensen-huang', role: 'host' }, 'role', { role: null }],
    [
      { keyword_search: 'chips', entity_type: 'KNOWLEDGE_GRAPH_ENTITY' },
      'entity_type',
      { entity_type: null },
    ],
    [{ keyword_search: 'fox', entity_slug: 'societe-generale' }, 'entity_slug', { entity_slug: null }],
    [{ keyword_search: 'fox market' }, 'keyword_search', { keyword_match: 'ranked' }],
    [{ keyword_search: 'zeppelin' }, 'keyword_search', { keyword_search: null }],
  ])('names the filter that excluded everything on an empty page: %j', async (query, filter, retryWith) => {
    const { status, body } = await h.json(SEARCH, query as Record<string, string>);
    expect(status).toBe(200);
    expect(body.data).toEqual([]);
    expect(body.diagnostics).toMatchObject({ filter, retry_with: retryWith });
    expect(body.diagnostics.why).toEqual(expect.any(String));
  });

  it.each([
    ['entity_slug', 'nobody', '/v1/entities/search'],
    ['entity_id', 'ent-nobody', '/v1/entities/search'],
    ['person_slug', 'nvidia', '/v1/entities/search'],
    ['company_slug', 'jensen-huang', '/v1/entities/search'],
    ['podcast_id', 'no-such-show', '/v1/podcasts/search'],
    ['episode_id', 'no-such-episode', '/v1/podcasts/episodes'],
  ])(
    'rejects an unresolvable %s with 422 unresolved_reference and the resolve endpoint',
    async (parameter, value, endpoint) => {
      const { status, body } = await h.json(SEARCH, { keyword_search: 'chips', [parameter]: value });
      expect(status).toBe(422);
      expect(body.error_code).toBe('unresolved_reference');
      expect(body.errors).toEqual([
        { location: `query.${parameter}`, message: 'resolves to nothing', value },
      ]);
      expect(body.resolve).toMatchObject({ endpoint, method: 'GET' });
    },
  );

  it('rejects a role without an entity, an unknown role, an unknown entity type and two entities', async () => {
    const cases: [Record<string, string>, string, string][] = [
      [{ role: 'GUEST' }, 'role_requires_entity', 'query.role'],
      [{ role: 'DJ', entity_id: 'ent-jensen' }, 'invalid_role', 'query.role'],
      [{ entity_type: 'PLANET' }, 'invalid_entity_type', 'query.entity_type'],
      [{ entity_id: 'ent-jensen', entity_slug: 'nvidia' }, 'conflicting_parameters', 'query.entity_id'],
    ];
    for (const [query, code, location] of cases) {
      const { status, body } = await h.json(SEARCH, { keyword_search: 'chips', ...query });
      expect(status).toBe(422);
      expect(body.error_code).toBe(code);
      expect(body.errors[0].location).toBe(location);
    }
  });

  it('answers limits with a problem naming the parameter', async () => {
    const long = await h.json(SEARCH, { keyword_search: 'a'.repeat(501) });
    expect(long.status).toBe(400);
    expect(long.body.errors[0].location).toBe('query.keyword_search');
    const empty = await h.json(SEARCH, { keyword_search: '?!' });
    expect(empty.status).toBe(400);
    const many = await h.json(SEARCH, {
      keyword_search: Array.from({ length: 33 }, (_, i) => `w${i}`).join(' '),
    });
    expect(many.status).toBe(400);
    expect((await h.json(SEARCH, { limit: '101' })).body.errors[0].location).toBe('query.limit');
    expect((await h.json(SEARCH, { language: 'english' })).body.errors[0].location).toBe('query.language');
    const range = await h.json(SEARCH, { since: '2026-11-01', until: '2026-10-01' });
    expect(range.status).toBe(422);
    expect(range.body.error_code).toBe('invalid_range');
  });

  it('takes no company_id on episode search and its timeseries (company_slug names a company there)', async () => {
    const openapi = (await h.app.inject({ url: '/openapi.json' })).json();
    const names = (path: string) =>
      openapi.paths[path].get.parameters.map((p: { name: string }) => p.name) as string[];
    for (const path of [SEARCH, '/v1/podcasts/episodes/timeseries'])
      expect(names(path)).not.toContain('company_id');
    for (const path of ['/v1/podcasts/mentions', '/v1/podcasts/mentions/timeseries'])
      expect(names(path)).toContain('company_id');
    const all = await ids({ keyword_search: 'chips' });
    expect(all).toHaveLength(3);
    expect(await ids({ keyword_search: 'chips', company_id: 'nobody.example' })).toEqual(all);
    const series = await h.json('/v1/podcasts/episodes/timeseries', {
      keyword_search: 'chips',
      company_id: 'nobody.example',
      interval: 'month',
      since: '2026-09-01',
      until: '2026-12-01',
    });
    expect(series.body.total_episodes).toBe(3);
  });

  it('describes semantic_search in /openapi.json; with semantic search off it answers 422 semantic_search_disabled', async () => {
    for (const url of [SEARCH, '/v1/podcasts/episodes/timeseries']) {
      const { status, body } = await h.json(url, { semantic_search: 'chip makers', since: '2026-01-01' });
      expect(status).toBe(422);
      expect(body.error_code).toBe('semantic_search_disabled');
      expect(body.errors[0].location).toBe('query.semantic_search');
    }
    const openapi = (await h.app.inject({ url: '/openapi.json' })).json();
    for (const path of [
      SEARCH,
      '/v1/podcasts/episodes/timeseries',
      '/v1/podcasts/mentions',
      '/v1/podcasts/mentions/timeseries',
    ])
      expect(openapi.paths[path].get.responses).toHaveProperty('200');
    const semantic = openapi.paths[SEARCH].get.parameters.find(
      (p: { name: string }) => p.name === 'semantic_search',
    );
    expect(semantic.description).toContain('reciprocal rank fusion');
    expect(JSON.stringify(openapi)).not.toContain('semantic_search_unavailable');
  });
});

describe('mentions', () => {
  const MENTIONS = '/v1/podcasts/mentions';

  it("lists the producer's mentions with windows of context_lines around each", async () => {
    const { body } = await h.json(MENTIONS, { entity_id: 'ent-nvidia' });
    expect(body.entity).toEqual({ id: 'ent-nvidia', name: 'Nvidia', slug: 'nvidia', entity_type: 'COMPANY' });
    expect(body.data).toHaveLength(1);
    const [item] = body.data;
    expect(item).toMatchObject({ mention_count: 1, mention_variants: ['NVIDIA'], truncated: false });
    expect(item.windows[0].lines.map((l: { number: number }) => l.number)).toEqual([2, 3, 4, 5, 6]);
    expect(item.windows[0].segment_id).toBe('seg-intro');
    const narrow = await h.json(MENTIONS, { company_id: 'nvidia.com', context_lines: '0' });
    expect(narrow.body.data[0].windows[0].lines.map((l: { number: number }) => l.number)).toEqual([4]);
    expect((await h.json(MENTIONS, { entity_id: 'ent-nvidia', context_lines: '21' })).status).toBe(400);
  });

  it('names a company by any company reference on mentions and their timeseries; unknown: 422', async () => {
    for (const company of companyReferences(NVIDIA)) {
      const { status, body } = await h.json(MENTIONS, { company_id: company });
      expect(status, company).toBe(200);
      expect(body.entity.id).toBe('ent-nvidia');
      expect(body.data.map((i: { episode: { id: string } }) => i.episode.id)).toEqual(['ep-fox']);
      const series = await h.json('/v1/podcasts/mentions/timeseries', {
        company_id: company,
        interval: 'month',
      });
      expect(series.status, company).toBe(200);
      expect(series.body.total_mentions).toBe(1);
    }
    for (const url of [MENTIONS, '/v1/podcasts/mentions/timeseries']) {
      for (const company of ['nobody.example', 'jensen-huang']) {
        const { status, body } = await h.json(url, { company_id: company });
        expect(status).toBe(422);
        expect(body).toMatchObject({
          error_code: 'unresolved_reference',
          errors: [{ location: 'query.company_id', value: company }],
        });
      }
    }
  });

  it('detects names and aliases like the matcher, newest first, for an entity added after the episodes', async () => {
    await h.ingest([ada]);
    const { body } = await h.json(MENTIONS, { person_slug: 'ada-lovelace' });
    expect(body.data.map((i: { episode: { id: string } }) => i.episode.id)).toEqual(['ep-sg', 'ep-near']);
    expect(body.data[0]).toMatchObject({ mention_count: 1, mention_variants: ['Ada Lovelace'] });
    const sg = await h.json(MENTIONS, { entity_slug: 'societe-generale' });
    expect(sg.body.data[0].mention_count).toBe(2);
    expect([...sg.body.data[0].mention_variants].sort()).toEqual(['SOCIETE GENERALE', 'Société Générale']);
    const paged = await h.json(MENTIONS, { person_slug: 'ada-lovelace', limit: '1' });
    const next = await h.json(MENTIONS, {
      person_slug: 'ada-lovelace',
      limit: '1',
      cursor: paged.body.cursor,
    });
    expect(next.body.data.map((i: { episode: { id: string } }) => i.episode.id)).toEqual(['ep-near']);
  });

  it('filters mentions by podcast, language and range, and needs an entity', async () => {
    await h.ingest([ada]);
    const fr = await h.json(MENTIONS, { person_slug: 'ada-lovelace', language: 'fr' });
    expect(fr.body.data.map((i: { episode: { id: string } }) => i.episode.id)).toEqual(['ep-sg']);
    const none = await h.json(MENTIONS, {
      person_slug: 'ada-lovelace',
      podcast_id: 'chip-talk',
      since: '2026-10-01',
    });
    expect(none.body.data).toEqual([]);
    expect(none.body.diagnostics.filter).toBe('podcast_id');
    const missing = await h.json(MENTIONS, {});
    expect(missing.status).toBe(422);
    expect(missing.body.error_code).toBe('entity_required');
    expect((await h.json(MENTIONS, { entity_slug: 'nobody' })).body.error_code).toBe('unresolved_reference');
  });

  it('detects, for an entity added after the episode, a name among 100 aliases that fold to 681 words each (ﷺ is four)', async () => {
    // 170 × 4 words and a number: as many words as a line has indexed.
    const alias = (i: number) => `${'ﷺ'.repeat(170)} ${i}`;
    const filler = (n: number) => Array.from({ length: n }, () => 'Filler.');
    // Each in a row of its own (a row keeps 256 positions of a word); the last a word short of alias 3.
    const lines = ['Hello.', alias(3), ...filler(39), alias(42), ...filler(39), `${'ﷺ'.repeat(169)} 3`];
    await h.ingest([episodeEvent({ id: 'ep-long', publishedAt: '2026-11-11T08:00:00Z', lines })]);
    await h.ingest([
      entityEvent({
        id: 'ent-long',
        name: 'Long Names',
        aliases: Array.from({ length: 100 }, (_, i) => alias(i)),
        entity_type: 'PERSON',
      }),
    ]);
    const list = await h.json(MENTIONS, { entity_id: 'ent-long', context_lines: '0' });
    expect(list.status).toBe(200);
    // The name and the first six aliases fill the 4,096 words looked for: alias 3, not alias 42.
    expect(list.body.data.map((i: { episode: { id: string } }) => i.episode.id)).toEqual(['ep-long']);
    expect(list.body.data[0]).toMatchObject({ mention_count: 1 });
    expect(list.body.data[0].windows.map((w: { lines: { number: number }[] }) => w.lines[0]!.number)).toEqual(
      [2],
    );
    const series = await h.json('/v1/podcasts/mentions/timeseries', { entity_id: 'ent-long' });
    expect(series.status).toBe(200);
    expect(series.body).toMatchObject({ total_episodes: 1, total_mentions: 1 });
  });

  it('detects a name of more than 8 words (bound as one array) only where its words follow in order', async () => {
    const name = 'Alpha Bravo Charlie Delta Echo Foxtrot Golf Hotel India';
    const lines = [
      'Hello.',
      'Alpha Bravo Charlie Delta Echo Foxtrot Golf India Hotel.',
      'Alpha Bravo Charlie Delta Echo Foxtrot Golf Hotel.',
      'India was next.',
      `We met ${name} today.`,
      'Alpha Bravo Charlie Delta Echo Foxtrot Golf Hotel Hotel India.',
    ];
    await h.ingest([episodeEvent({ id: 'ep-nine', publishedAt: '2026-11-12T08:00:00Z', lines })]);
    await h.ingest([entityEvent({ id: 'ent-nine', name, aliases: [], entity_type: 'PERSON' })]);
    const list = await h.json(MENTIONS, { entity_id: 'ent-nine', context_lines: '0' });
    expect(list.status).toBe(200);
    expect(list.body.data.map((i: { episode: { id: string } }) => i.episode.id)).toEqual(['ep-nine']);
    expect(list.body.data[0]).toMatchObject({ mention_count: 1 });
    expect(list.body.data[0].windows.map((w: { lines: { number: number }[] }) => w.lines[0]!.number)).toEqual(
      [5],
    );
  });

  it('keeps 50 windows and says truncated past them', async () => {
    const lines = Array.from({ length: 120 }, (_, i) =>
      i % 2 === 0 ? 'Zebra Corp again.' : 'Nothing here.',
    );
    await h.ingest([
      entityEvent({ id: 'ent-zebra', name: 'Zebra Corp', entity_type: 'COMPANY' }),
      episodeEvent({ id: 'ep-zebra', lines, publishedAt: '2025-01-01T00:00:00Z' }),
    ]);
    const { body } = await h.json(MENTIONS, { entity_id: 'ent-zebra', context_lines: '0' });
    expect(body.data[0]).toMatchObject({ mention_count: 60, truncated: true });
    expect(body.data[0].windows).toHaveLength(50);
  });
});

describe('timeseries', () => {
  it('zero-fills monthly buckets across month boundaries in UTC', async () => {
    const { body } = await h.json('/v1/podcasts/episodes/timeseries', {
      keyword_search: 'chips',
      interval: 'month',
      since: '2026-09-01',
      until: '2026-12-01',
    });
    expect(body).toMatchObject({
      interval: 'month',
      start: '2026-09-01T00:00:00.000Z',
      end: '2026-12-01T00:00:00.000Z',
    });
    expect(body.buckets).toEqual([
      { start: '2026-09-01T00:00:00.000Z', episode_count: 1, mention_count: 1 },
      { start: '2026-10-01T00:00:00.000Z', episode_count: 1, mention_count: 1 },
      { start: '2026-11-01T00:00:00.000Z', episode_count: 1, mention_count: 1 },
    ]);
    expect(body).toMatchObject({ total_episodes: 3, total_mentions: 3 });
  });

  it('starts weeks on Monday (since cuts the first one) and keeps days 24 hours long across DST changes', async () => {
    const weeks = await h.json('/v1/podcasts/episodes/timeseries', {
      keyword_search: 'chips',
      since: '2026-09-30',
      until: '2026-11-09',
    });
    expect(
      weeks.body.buckets.map((b: { start: string; episode_count: number }) => [
        b.start.slice(0, 10),
        b.episode_count,
      ]),
    ).toEqual([
      ['2026-09-28', 0],
      ['2026-10-05', 1],
      ['2026-10-12', 0],
      ['2026-10-19', 0],
      ['2026-10-26', 0],
      ['2026-11-02', 1],
    ]);
    const days = await h.json('/v1/podcasts/episodes/timeseries', {
      keyword_search: 'chips',
      interval: 'day',
      since: '2026-10-24',
      until: '2026-11-04',
    });
    const starts = days.body.buckets.map((b: { start: string }) => Date.parse(b.start));
    expect(starts).toHaveLength(11);
    for (let i = 1; i < starts.length; i++) expect(starts[i] - starts[i - 1]).toBe(86_400_000);
    const counted = days.body.buckets.filter((b: { episode_count: number }) => b.episode_count > 0);
    expect(counted).toEqual([{ start: '2026-11-02T00:00:00.000Z', episode_count: 1, mention_count: 1 }]);
  });

  it("counts an entity's mentions per bucket, the producer's or detected ones", async () => {
    await h.ingest([ada]);
    const { body } = await h.json('/v1/podcasts/mentions/timeseries', {
      entity_slug: 'societe-generale',
      interval: 'month',
      since: '2026-09-01',
      until: '2026-12-01',
    });
    expect(body.buckets.map((b: { mention_count: number }) => b.mention_count)).toEqual([0, 0, 2]);
    expect(body).toMatchObject({ total_episodes: 1, total_mentions: 2 });
    const nvidia = await h.json('/v1/podcasts/mentions/timeseries', {
      entity_id: 'ent-nvidia',
      interval: 'month',
    });
    expect(nvidia.body.buckets).toHaveLength(13);
    expect(nvidia.body.total_mentions).toBe(1);
    const asGuest = await h.json('/v1/podcasts/mentions/timeseries', {
      entity_id: 'ent-nvidia',
      role: 'GUEST',
    });
    expect(asGuest.body.total_mentions).toBe(0);
  });

  it("counts the producer's mentions of an entity whose name and aliases fold to no word", async () => {
    await h.ingest([
      entityEvent({ id: 'ent-emoji', name: '🙂', aliases: ['—', '\u0301'] }),
      episodeEvent({
        id: 'ep-emoji',
        publishedAt: '2026-11-10T08:00:00Z',
        lines: ['Smile 🙂 everyone.', 'Bye.'],
        mentions: [{ entity_id: 'ent-emoji', lines: [1] }],
      }),
    ]);
    const { status, body } = await h.json('/v1/podcasts/mentions/timeseries', {
      entity_id: 'ent-emoji',
      interval: 'month',
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({ total_episodes: 1, total_mentions: 1 });
  });

  it('refuses more than 1100 buckets, naming since', async () => {
    const { status, body } = await h.json('/v1/podcasts/episodes/timeseries', {
      interval: 'day',
      since: '2020-01-01',
    });
    expect(status).toBe(422);
    expect(body.error_code).toBe('range_too_large');
    expect(body.errors[0].location).toBe('query.since');
  });
});
