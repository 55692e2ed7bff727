import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chartCapturesProjection } from '../../projections/chart_captures/projection.ts';
import { podcastsProjection } from '../../projections/podcasts/projection.ts';
import type { Db } from '../../src/db/db.ts';
import type { EventStore } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { ingestionRoutes } from '../../src/ingestion/routes.ts';
import { createKey } from '../../src/platform/keys.ts';
import { rankingRoutes } from '../../src/rankings/routes.ts';
import { episodeEvent } from '../fixtures/events.ts';
import { type Placed, rankingEvent } from '../fixtures/rankings.ts';
import { createDb, ENGINES } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';
import { catchUp } from '../support/projections.ts';

const APPLE_ID = '1200361736';
const pod = (rank: number, id: string): Placed => ({
  rank,
  podcast_id: id,
  external_id: id === 'pod-a' ? APPLE_ID : `ext-${id}`,
});

// Apple US top podcasts, three captures: C0 (Nov 1), C1 (Nov 10), C2 (Nov 18, the latest).
const C0 = rankingEvent({}, '2026-11-01T06:00:00Z', [
  pod(1, 'pod-a'),
  pod(2, 'pod-b'),
  pod(3, 'pod-c'),
  pod(4, 'pod-d'),
]);
const C1 = rankingEvent({}, '2026-11-10T06:00:00Z', [
  pod(1, 'pod-b'),
  pod(2, 'pod-a'),
  pod(3, 'pod-c'),
  pod(4, 'pod-e'),
]);
const C2 = rankingEvent({}, '2026-11-18T06:00:00Z', [
  pod(1, 'pod-e'),
  pod(2, 'pod-a'),
  pod(3, 'pod-b'),
  pod(4, 'pod-f'),
]);
const TECH = rankingEvent(
  { category: { slug: 'technology', name: 'Technology', external_id: '1318', parent_slug: null } },
  '2026-11-18T06:00:00Z',
  [pod(1, 'pod-x'), pod(5, 'pod-a')],
);
const SPOTIFY = rankingEvent({ source: 'spotify', country: 'gb' }, '2026-11-17T06:00:00Z', [pod(7, 'pod-a')]);
// An entry without a podcast id: followed across captures by its directory id.
const UNLINKED_1 = rankingEvent({ chart_type: 'trending' }, '2026-11-01T00:00:00Z', [
  { rank: 3, external_id: 'apple-999', name: 'Unlinked Show' },
]);
const UNLINKED_2 = rankingEvent({ chart_type: 'trending' }, '2026-11-02T00:00:00Z', [
  { rank: 1, external_id: 'apple-999', name: 'Unlinked Show' },
]);

describe.each(ENGINES)('rankings read model and endpoints on %s', (engine) => {
  let db: Db;
  let drop: () => Promise<void>;
  let store: EventStore;
  let app: FastifyInstance;
  let headers: Record<string, string>;
  let ingestHeaders: Record<string, string>;

  beforeAll(async () => {
    ({ db, drop } = await createDb(engine));
    store = createPostgresEventStore(db);
    app = await buildHttpApp({
      db,
      cursorKey: Buffer.alloc(32, 7),
      routes: [rankingRoutes, ingestionRoutes(store)],
    });
    headers = (await createTenant(db)).headers;
    ingestHeaders = { 'x-api-key': (await createKey(db, { kind: 'ingest' })).key };
    // C1 arrives after C2: stored captures do not depend on arrival order.
    await ingestEvents(store, [C0, C2, C1, TECH, SPOTIFY, UNLINKED_1, UNLINKED_2]);
    await ingestEvents(store, [
      episodeEvent({ podcast: { id: 'pod-a', title: 'Show A', slug: 'show-a' } }),
      episodeEvent({ podcast: { id: 'pod-quiet', title: 'Never charted', slug: 'never-charted' } }),
    ]);
    await catchUp(db, store, chartCapturesProjection);
    await catchUp(db, store, podcastsProjection);
    // Catching up waits for every older transaction in the cluster; a busy shared server is slow.
  }, 180_000);
  afterAll(async () => {
    await app.close();
    await store.close();
    await drop();
  });

  const get = (url: string, query: Record<string, string> = {}) => app.inject({ url, query, headers });
  const ranks = (body: { data: { rank: number; podcast?: { id: string } }[] }) =>
    body.data.map((r) => [r.podcast?.id, r.rank]);

  it('lists every rankings route in /openapi.json with its parameters and response schema', async () => {
    const { paths } = (await app.inject({ url: '/openapi.json' })).json();
    const names = (path: string) => paths[path].get.parameters.map((p: { name: string }) => p.name).sort();
    expect(names('/v1/podcasts/{id}/rankings')).toEqual(['cursor', 'id', 'limit']);
    expect(names('/v1/podcasts/rankings')).toEqual(
      ['category_slug', 'chart_type', 'country', 'cursor', 'limit', 'max_rank', 'min_rank', 'source'].sort(),
    );
    expect(names('/v1/podcasts/rankings/movers')).toContain('window_days');
    expect(names('/v1/podcasts/{id}/rankings/history')).toEqual(
      ['category_slug', 'country', 'cursor', 'id', 'limit', 'since', 'source', 'until'].sort(),
    );
    expect(paths['/v1/podcasts/rankings'].get.responses['200']).toBeDefined();
  });

  describe('GET /v1/podcasts/{id}/rankings', () => {
    it('lists every live appearance of the podcast, best rank first, all of them when limit is omitted', async () => {
      const response = await get('/v1/podcasts/pod-a/rankings');
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body.has_more).toBe(false);
      expect(
        body.data.map((r: { source: string; category?: { slug: string }; rank: number }) => [
          r.source,
          r.category?.slug,
          r.rank,
        ]),
      ).toEqual([
        ['apple', undefined, 2],
        ['apple', 'technology', 5],
        ['spotify', undefined, 7],
      ]);
      expect(body.data[0]).toEqual({
        id: expect.any(String),
        external_id: APPLE_ID,
        chart_type: 'top_podcasts',
        source: 'apple',
        captured_at: '2026-11-18T06:00:00.000Z',
        is_current: true,
        rank: 2,
        country: 'us',
        previous_rank: 2,
        chart_total: 4,
        show: { name: 'pod-a' },
        // The catalog's reference of the show, not the chart's name for it; its best rank is this
        // first live appearance.
        podcast: {
          id: 'pod-a',
          title: 'Show A',
          slug: 'show-a',
          best_rank: {
            captured_at: '2026-11-18T06:00:00.000Z',
            chart_type: 'top_podcasts',
            rank: 2,
            source: 'apple',
            country: 'us',
          },
        },
      });
      expect(body.data[1].category).toEqual({
        slug: 'technology',
        name: 'Technology',
        external_id: '1318',
      });
      expect(body.data[1]).not.toHaveProperty('previous_rank');
    });

    it('resolves the podcast by id, Apple id and slug', async () => {
      const byId = (await get('/v1/podcasts/pod-a/rankings')).json();
      expect((await get(`/v1/podcasts/${APPLE_ID}/rankings`)).json()).toEqual(byId);
      expect((await get('/v1/podcasts/show-a/rankings')).json()).toEqual(byId);
    });

    it('answers a known podcast that never charted with an empty list and an unknown one with 404', async () => {
      expect((await get('/v1/podcasts/never-charted/rankings')).json()).toEqual({
        data: [],
        has_more: false,
      });
      const missing = await get('/v1/podcasts/nope/rankings');
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toMatchObject({ status: 404, error_code: 'podcast_not_found' });
    });

    it('pages through the appearances with limit and the signed cursor', async () => {
      const seen: number[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 5; pages++) {
        const body = (
          await get('/v1/podcasts/pod-a/rankings', { limit: '2', ...(cursor && { cursor }) })
        ).json();
        seen.push(...body.data.map((r: { rank: number }) => r.rank));
        cursor = body.cursor;
        if (!body.has_more) break;
      }
      expect(seen).toEqual([2, 5, 7]);
      const first = (await get('/v1/podcasts/pod-a/rankings', { limit: '1' })).json();
      const foreign = await get('/v1/podcasts/pod-b/rankings', { limit: '1', cursor: first.cursor });
      expect(foreign.statusCode).toBe(400);
      expect(foreign.json()).toMatchObject({ error_code: 'invalid_cursor' });
    });

    it.each([
      ['0', 'query.limit'],
      ['101', 'query.limit'],
    ])('refuses limit=%s with 400 naming the parameter', async (limit, location) => {
      const response = await get('/v1/podcasts/pod-a/rankings', { limit });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ error_code: 'invalid_parameter' });
      expect(response.json().errors[0].location).toBe(location);
    });
  });

  describe('GET /v1/podcasts/rankings', () => {
    it("answers Apple's US top podcasts by default: the chart's latest capture by rank, with previous ranks", async () => {
      const body = (await get('/v1/podcasts/rankings')).json();
      expect(ranks(body)).toEqual([
        ['pod-e', 1],
        ['pod-a', 2],
        ['pod-b', 3],
        ['pod-f', 4],
      ]);
      expect(body.data.map((r: { previous_rank?: number }) => r.previous_rank)).toEqual([4, 2, 1, undefined]);
      expect(body.data.every((r: { is_current: boolean }) => r.is_current)).toBe(true);
    });

    it('selects the chart by source, chart_type, country and category_slug', async () => {
      expect(ranks((await get('/v1/podcasts/rankings', { category_slug: 'technology' })).json())).toEqual([
        ['pod-x', 1],
        ['pod-a', 5],
      ]);
      expect(
        ranks((await get('/v1/podcasts/rankings', { source: 'spotify', country: 'GB' })).json()),
      ).toEqual([['pod-a', 7]]);
      const trending = (await get('/v1/podcasts/rankings', { chart_type: 'trending' })).json();
      expect(trending.data).toMatchObject([{ rank: 1, previous_rank: 3, external_id: 'apple-999' }]);
      expect(trending.data[0]).not.toHaveProperty('podcast');
      expect((await get('/v1/podcasts/rankings', { country: 'fr' })).json()).toEqual({
        data: [],
        has_more: false,
      });
    });

    it('narrows by min_rank and max_rank', async () => {
      expect(ranks((await get('/v1/podcasts/rankings', { min_rank: '2', max_rank: '3' })).json())).toEqual([
        ['pod-a', 2],
        ['pod-b', 3],
      ]);
    });

    it('pages through a chart', async () => {
      const first = (await get('/v1/podcasts/rankings', { limit: '3' })).json();
      expect(first.has_more).toBe(true);
      const second = (await get('/v1/podcasts/rankings', { limit: '3', cursor: first.cursor })).json();
      expect([...ranks(first), ...ranks(second)].map(([, rank]) => rank)).toEqual([1, 2, 3, 4]);
      expect(second.has_more).toBe(false);
      const otherChart = await get('/v1/podcasts/rankings', {
        limit: '3',
        cursor: first.cursor,
        country: 'gb',
      });
      expect(otherChart.json()).toMatchObject({ error_code: 'invalid_cursor' });
    });

    it.each([
      [{ max_rank: '501' }, 'query.max_rank'],
      [{ min_rank: '0' }, 'query.min_rank'],
      [{ source: 'deezer' }, 'query.source'],
      [{ country: 'usa' }, 'query.country'],
      [{ category_slug: 'x'.repeat(201) }, 'query.category_slug'],
    ])('refuses %o with 400 naming the parameter', async (query, location) => {
      const response = await get('/v1/podcasts/rankings', query);
      expect(response.statusCode).toBe(400);
      expect(response.json().errors.map((e: { location: string }) => e.location)).toContain(location);
    });

    it('refuses min_rank above max_rank with 422', async () => {
      const response = await get('/v1/podcasts/rankings', { min_rank: '10', max_rank: '5' });
      expect(response.statusCode).toBe(422);
      expect(response.json()).toMatchObject({
        error_code: 'invalid_range',
        errors: [{ location: 'query.min_rank', value: 10 }],
      });
    });
  });

  describe('GET /v1/podcasts/rankings/movers', () => {
    const movers = async (query: Record<string, string>) =>
      (await get('/v1/podcasts/rankings/movers', query))
        .json()
        .data.map(
          (m: {
            change: string;
            podcast?: { id: string };
            rank?: number;
            previous_rank?: number;
            delta?: number;
          }) => [m.podcast?.id, m.change, m.rank ?? null, m.previous_rank ?? null, m.delta ?? null],
        );

    it('compares the latest capture with the latest one at least window_days older: up, down, new and exit', async () => {
      // Nov 18 against Nov 10 (the newest capture at least 7 days older); pod-a held rank 2.
      expect(await movers({})).toEqual([
        ['pod-e', 'up', 1, 4, 3],
        ['pod-b', 'down', 3, 1, -2],
        ['pod-f', 'new', 4, null, null],
        ['pod-c', 'exit', null, 3, null],
      ]);
      const body = (await get('/v1/podcasts/rankings/movers')).json();
      expect(body.data[0]).toMatchObject({
        captured_at: '2026-11-18T06:00:00.000Z',
        baseline_captured_at: '2026-11-10T06:00:00.000Z',
        is_current: true,
      });
      expect(body.data[3]).toMatchObject({ captured_at: '2026-11-10T06:00:00.000Z', is_current: false });
    });

    it('falls back to the earliest capture when none is window_days older', async () => {
      expect(await movers({ window_days: '30' })).toEqual([
        ['pod-a', 'down', 2, 1, -1],
        ['pod-b', 'down', 3, 2, -1],
        ['pod-e', 'new', 1, null, null],
        ['pod-f', 'new', 4, null, null],
        ['pod-c', 'exit', null, 3, null],
        ['pod-d', 'exit', null, 4, null],
      ]);
    });

    it('filters by change', async () => {
      expect(await movers({ change: 'up' })).toEqual([['pod-e', 'up', 1, 4, 3]]);
      expect(await movers({ change: 'down', window_days: '30' })).toHaveLength(2);
      expect(await movers({ change: 'new', window_days: '30' })).toEqual([
        ['pod-e', 'new', 1, null, null],
        ['pod-f', 'new', 4, null, null],
      ]);
      expect(await movers({ change: 'exit' })).toEqual([['pod-c', 'exit', null, 3, null]]);
    });

    it('pages through the movers of one comparison', async () => {
      const first = (await get('/v1/podcasts/rankings/movers', { window_days: '30', limit: '4' })).json();
      const second = (
        await get('/v1/podcasts/rankings/movers', { window_days: '30', limit: '4', cursor: first.cursor })
      ).json();
      expect(first.data).toHaveLength(4);
      expect(second).toMatchObject({ has_more: false });
      expect(second.data.map((m: { change: string }) => m.change)).toEqual(['exit', 'exit']);
    });

    it.each([
      [{ window_days: '0' }, 'query.window_days'],
      [{ window_days: '31' }, 'query.window_days'],
      [{ change: 'sideways' }, 'query.change'],
    ])('refuses %o with 400 naming the parameter', async (query, location) => {
      const response = await get('/v1/podcasts/rankings/movers', query);
      expect(response.statusCode).toBe(400);
      expect(response.json().errors[0].location).toBe(location);
    });
  });

  describe('GET /v1/podcasts/{id}/rankings/history', () => {
    const history = async (id: string, query: Record<string, string> = {}) =>
      (await get(`/v1/podcasts/${id}/rankings/history`, query))
        .json()
        .data.map(
          (r: {
            source: string;
            category?: { slug: string };
            captured_at: string;
            rank: number;
            is_current: boolean;
          }) => [r.source, r.category?.slug ?? null, r.captured_at.slice(0, 10), r.rank, r.is_current],
        );

    it('lists every entry of the podcast in every capture, oldest first', async () => {
      expect(await history('pod-a')).toEqual([
        ['apple', null, '2026-11-01', 1, false],
        ['apple', null, '2026-11-10', 2, false],
        ['spotify', null, '2026-11-17', 7, true],
        ['apple', null, '2026-11-18', 2, true],
        ['apple', 'technology', '2026-11-18', 5, true],
      ]);
    });

    it('filters by source, country, category_slug, since and until', async () => {
      expect(await history('pod-a', { source: 'spotify' })).toEqual([
        ['spotify', null, '2026-11-17', 7, true],
      ]);
      expect(await history('pod-a', { country: 'gb' })).toHaveLength(1);
      expect(await history('pod-a', { source: 'apple', category_slug: 'technology' })).toEqual([
        ['apple', 'technology', '2026-11-18', 5, true],
      ]);
      expect(
        await history('pod-a', { since: '2026-11-05T00:00:00Z', until: '2026-11-18T00:00:00Z' }),
      ).toEqual([
        ['apple', null, '2026-11-10', 2, false],
        ['spotify', null, '2026-11-17', 7, true],
      ]);
      expect(await history(APPLE_ID, { source: 'apple', country: 'us' })).toHaveLength(4);
      // A date is midnight UTC, as everywhere in the catalog.
      expect(await history('pod-a', { since: '2026-11-05', until: '2026-11-18' })).toEqual(
        await history('pod-a', { since: '2026-11-05T00:00:00Z', until: '2026-11-18T00:00:00Z' }),
      );
    });

    it('pages through the history', async () => {
      const dates: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 10; pages++) {
        const body = (
          await get('/v1/podcasts/pod-a/rankings/history', { limit: '2', ...(cursor && { cursor }) })
        ).json();
        dates.push(...body.data.map((r: { captured_at: string }) => r.captured_at.slice(0, 10)));
        cursor = body.cursor;
        if (!body.has_more) break;
      }
      expect(dates).toEqual(['2026-11-01', '2026-11-10', '2026-11-17', '2026-11-18', '2026-11-18']);
    });

    it('refuses category_slug without source with 422, bad dates with 400, since after until with 422, unknown podcasts with 404', async () => {
      const orphan = await get('/v1/podcasts/pod-a/rankings/history', { category_slug: 'technology' });
      expect(orphan.statusCode).toBe(422);
      expect(orphan.json()).toMatchObject({
        error_code: 'invalid_parameter',
        errors: [{ location: 'query.category_slug' }],
      });
      const badDate = await get('/v1/podcasts/pod-a/rankings/history', { since: 'yesterday' });
      expect(badDate.statusCode).toBe(400);
      expect(badDate.json().errors[0].location).toBe('query.since');
      const reversed = await get('/v1/podcasts/pod-a/rankings/history', {
        since: '2026-11-18',
        until: '2026-11-05',
      });
      expect(reversed.statusCode).toBe(422);
      expect(reversed.json()).toMatchObject({
        error_code: 'invalid_range',
        errors: [{ location: 'query.since' }],
      });
      expect((await get('/v1/podcasts/nope/rankings/history')).json()).toMatchObject({
        status: 404,
        error_code: 'podcast_not_found',
      });
    });

    it('refuses a date in year 0 with 400, as a date-time there, and takes year 1 and 9999', async () => {
      for (const name of ['since', 'until']) {
        const yearZero = await get('/v1/podcasts/pod-a/rankings/history', { [name]: '0000-01-01' });
        expect(yearZero.statusCode).toBe(400);
        expect(yearZero.json().error_code).toBe('invalid_parameter');
        expect(yearZero.json().errors[0].location).toBe(`query.${name}`);
      }
      const widest = await get('/v1/podcasts/pod-a/rankings/history', {
        since: '0001-01-01',
        until: '9999-12-31',
      });
      expect(widest.statusCode).toBe(200);
      expect(widest.json().data).toHaveLength(5);
    });
  });

  describe('ingestion of ranking.captured', () => {
    const post = (events: unknown[]) =>
      app.inject({ method: 'POST', url: '/v1/ingest/events', headers: ingestHeaders, payload: { events } });

    it('rejects the whole batch when a capture repeats a rank or lacks a directory id', async () => {
      const good = rankingEvent({ country: 'de' });
      const repeated = rankingEvent({ country: 'de' }, '2026-11-19T00:00:00Z', [
        pod(1, 'pod-a'),
        pod(1, 'pod-b'),
      ]);
      const noExternal = { ...rankingEvent(), entries: [{ rank: 1, show: { name: 'X' } }] };
      const response = await post([good, repeated, noExternal, { ...rankingEvent(), captured_at: 'today' }]);
      expect(response.statusCode).toBe(422);
      expect(response.json().errors.map((e: { location: string }) => e.location)).toEqual([
        '/events/1/entries/1/rank',
        '/events/2/entries/0/external_id',
        '/events/3/captured_at',
      ]);
    });

    it('replaces a re-sent capture unless the re-sent one is older', async () => {
      const chart = { country: 'it' };
      const at = '2026-11-18T06:00:00Z';
      await post([rankingEvent(chart, at, [pod(1, 'pod-a')], '2026-11-18T07:00:00Z')]);
      await post([rankingEvent(chart, at, [pod(1, 'pod-b'), pod(2, 'pod-a')], '2026-11-18T08:00:00Z')]);
      await post([rankingEvent(chart, at, [pod(1, 'pod-c')], '2026-11-18T06:30:00Z')]);
      await catchUp(db, store, chartCapturesProjection);
      expect(ranks((await get('/v1/podcasts/rankings', { country: 'it' })).json())).toEqual([
        ['pod-b', 1],
        ['pod-a', 2],
      ]);
    });
  });
});
