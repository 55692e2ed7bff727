import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chartCapturesProjection } from '../../projections/chart_captures/projection.ts';
import { podcastsProjection } from '../../projections/podcasts/projection.ts';
import type { Db } from '../../src/db/db.ts';
import type { EventStore } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { rankingRoutes } from '../../src/rankings/routes.ts';
import { rebuildProjection } from '../../src/subscriptions/projection-runner.ts';
import { podcastEvent } from '../catalog/support.ts';
import { rankingEvent } from '../fixtures/rankings.ts';
import { createDb, ENGINES } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';
import { catchUp } from '../support/projections.ts';

const APPLE = '555000111';
const chart = { chart_type: 'new-and-noteworthy' };
// Entries naming no podcast id, only the show's Apple id: one captured before the show is upserted,
// one after. A Spotify entry with the same external id is another directory's id.
const BEFORE = rankingEvent(chart, '2026-11-01T06:00:00Z', [
  { rank: 2, external_id: APPLE, name: 'Late Show' },
  { rank: 3, podcast_id: 'pod-named', external_id: 'ext-named' },
]);
const AFTER = rankingEvent(chart, '2026-11-02T06:00:00Z', [
  { rank: 1, external_id: APPLE, name: 'Late Show' },
  { rank: 2, podcast_id: 'pod-named', external_id: 'ext-named' },
]);
const SPOTIFY = rankingEvent({ source: 'spotify' }, '2026-11-02T06:00:00Z', [
  { rank: 4, external_id: APPLE, name: 'Late Show' },
]);
// An entry naming another show keeps it, whatever its external id.
const OTHER = rankingEvent({ source: 'youtube', chart_type: 'top_episodes' }, '2026-11-02T06:00:00Z', [
  { rank: 1, podcast_id: 'pod-named', external_id: APPLE },
]);

// A producer that learns the show's podcast id between two captures: the show is not new.
const mixed = { chart_type: 'mixed' };
const MIXED_1 = rankingEvent(mixed, '2026-11-01T06:00:00Z', [
  { rank: 1, podcast_id: 'pod-named', external_id: 'ext-named' },
  { rank: 3, external_id: APPLE, name: 'Late Show' },
]);
const MIXED_2 = rankingEvent(mixed, '2026-11-09T06:00:00Z', [
  { rank: 1, podcast_id: 'pod-late', external_id: APPLE, name: 'Late Show' },
  { rank: 2, podcast_id: 'pod-named', external_id: 'ext-named' },
]);

describe.each(ENGINES)("chart entries found by the show's Apple id on %s", (engine) => {
  let db: Db;
  let drop: () => Promise<void>;
  let store: EventStore;
  let app: FastifyInstance;
  let headers: Record<string, string>;

  const ingest = async (events: Parameters<typeof ingestEvents>[1]) => {
    await ingestEvents(store, events);
    await catchUp(db, store, chartCapturesProjection);
    await catchUp(db, store, podcastsProjection);
  };
  const get = (url: string, query: Record<string, string> = {}) => app.inject({ url, query, headers });
  const placed = async (url: string, query: Record<string, string> = {}) =>
    (await get(url, query))
      .json()
      .data.map(
        (r: {
          chart_type: string;
          source: string;
          rank: number;
          previous_rank?: number;
          podcast?: object;
        }) => [r.source, r.chart_type, r.rank, r.previous_rank, r.podcast],
      );

  beforeAll(async () => {
    ({ db, drop } = await createDb(engine));
    store = createPostgresEventStore(db);
    app = await buildHttpApp({ db, cursorKey: Buffer.alloc(32, 9), routes: [rankingRoutes] });
    headers = (await createTenant(db)).headers;
  }, 180_000);
  afterAll(async () => {
    await app.close();
    await store.close();
    await drop();
  });

  // The show's reference with its best rank: on an Apple chart its entries name it by Apple id only.
  const lateAt = (chart_type: string, rank: number, day: string) => ({
    id: 'pod-late',
    title: 'Late Show',
    popularity: 0.9,
    best_rank: {
      captured_at: `2026-11-${day}T06:00:00.000Z`,
      chart_type,
      rank,
      source: 'apple',
      country: 'us',
    },
  });
  // Rank 1 on both charts: the least chart key, apple/mixed/us/, wins.
  const bestOfMixed = lateAt('mixed', 1, '09');
  const expectClaimed = async (...mixedToo: unknown[]) => {
    const late = mixedToo.length ? bestOfMixed : lateAt('new-and-noteworthy', 1, '02');
    for (const id of ['pod-late', APPLE])
      expect(await placed(`/v1/podcasts/${id}/rankings`)).toEqual([
        ...mixedToo,
        ['apple', 'new-and-noteworthy', 1, 2, late],
      ]);
    expect(await placed('/v1/podcasts/pod-late/rankings/history')).toEqual(
      mixedToo.length
        ? [
            ['apple', 'mixed', 3, undefined, late],
            ['apple', 'new-and-noteworthy', 2, undefined, late],
            ['apple', 'new-and-noteworthy', 1, 2, late],
            ['apple', 'mixed', 1, 3, late],
          ]
        : [
            ['apple', 'new-and-noteworthy', 2, undefined, late],
            ['apple', 'new-and-noteworthy', 1, 2, late],
          ],
    );
    expect(await placed('/v1/podcasts/rankings', chart)).toEqual([
      ['apple', 'new-and-noteworthy', 1, 2, late],
      ['apple', 'new-and-noteworthy', 2, 3, { id: 'pod-named', title: 'pod-named' }],
    ]);
    // The less popular show with the same Apple id claims nothing.
    expect(await placed('/v1/podcasts/pod-dup/rankings')).toEqual([]);
    expect(await placed('/v1/podcasts/rankings', { source: 'spotify' })).toEqual([
      ['spotify', 'top_podcasts', 4, undefined, undefined],
    ]);
  };

  const expectMixed = async () => {
    const late = bestOfMixed;
    const moves = (await get('/v1/podcasts/rankings/movers', mixed)).json().data;
    expect(
      moves.map((m: { change: string; delta?: number; podcast?: { id: string } }) => [
        m.podcast?.id,
        m.change,
        m.delta,
      ]),
    ).toEqual([
      ['pod-late', 'up', 2],
      ['pod-named', 'down', -1],
    ]);
    expect(await placed('/v1/podcasts/rankings', mixed)).toEqual([
      ['apple', 'mixed', 1, 3, late],
      ['apple', 'mixed', 2, 1, { id: 'pod-named', title: 'pod-named' }],
    ]);
    expect(await placed('/v1/podcasts/pod-dup/rankings/history')).toEqual([]);
  };

  it('claims an entry captured before and one captured after the show is upserted, and a rebuild answers the same', async () => {
    await ingest([BEFORE, SPOTIFY, OTHER]);
    expect((await get(`/v1/podcasts/${APPLE}/rankings`)).statusCode).toBe(404);
    expect(await placed('/v1/podcasts/rankings', chart)).toEqual([
      ['apple', 'new-and-noteworthy', 2, undefined, undefined],
      ['apple', 'new-and-noteworthy', 3, undefined, { id: 'pod-named', title: 'pod-named' }],
    ]);

    await ingest([
      podcastEvent({ id: 'pod-late', title: 'Late Show', popularity: 0.9, directory_ids: { apple: APPLE } }),
      podcastEvent({
        id: 'pod-dup',
        title: 'Same Apple id',
        popularity: 0.1,
        directory_ids: { apple: APPLE },
      }),
    ]);
    expect(await placed('/v1/podcasts/pod-late/rankings/history')).toEqual([
      ['apple', 'new-and-noteworthy', 2, undefined, lateAt('new-and-noteworthy', 2, '01')],
    ]);

    await ingest([AFTER]);
    await expectClaimed();
    expect(await placed('/v1/podcasts/pod-named/rankings')).toEqual([
      ['youtube', 'top_episodes', 1, undefined, { id: 'pod-named', title: 'pod-named' }],
      ['apple', 'new-and-noteworthy', 2, 3, { id: 'pod-named', title: 'pod-named' }],
    ]);

    await ingest([MIXED_1, MIXED_2]);
    await expectMixed();

    await rebuildProjection(db, store, chartCapturesProjection);
    await rebuildProjection(db, store, podcastsProjection);
    await expectMixed();
    await expectClaimed(['apple', 'mixed', 1, 3, bestOfMixed]);
  }, 180_000);
});
