import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chartCapturesProjection } from '../../projections/chart_captures/projection.ts';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { catalogCapability, catalogProjections } from '../../src/catalog/capability.ts';
import type { Db } from '../../src/db/db.ts';
import type { EventStore } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import type { IngestEvent } from '../../src/ingestion/events.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { rankingRoutes } from '../../src/rankings/routes.ts';
import { rebuildProjection } from '../../src/subscriptions/projection-runner.ts';
import { episodeOf, NOW, podcastEvent } from '../catalog/support.ts';
import { rankingEvent } from '../fixtures/rankings.ts';
import { createDb, ENGINES } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';
import { catchUp } from '../support/projections.ts';

const APPLE_2 = '777000222';
const TECH = { category: { slug: 'technology', name: 'Technology' } };
const at = (day: string) => `2026-11-${day}T06:00:00Z`;
const best = (chart_type: string, rank: number, day: string, category_slug?: string) => ({
  captured_at: `2026-11-${day}T06:00:00.000Z`,
  chart_type,
  rank,
  source: 'apple',
  ...(category_slug ? { category_slug } : {}),
  country: 'us',
});

describe.each(ENGINES)('best_rank on podcast references on %s', (engine) => {
  let db: Db;
  let drop: () => Promise<void>;
  let store: EventStore;
  let app: FastifyInstance;
  let headers: Record<string, string>;

  const ingest = async (events: IngestEvent[]) => {
    await ingestEvents(store, events);
    for (const projection of [entitiesProjection, ...catalogProjections, chartCapturesProjection])
      await catchUp(db, store, projection);
  };
  // Captures move only their own read model, so a kept answer must be checked against it.
  const capture = async (...events: IngestEvent[]) => {
    await ingestEvents(store, events);
    await catchUp(db, store, chartCapturesProjection);
  };
  const get = async (url: string) => {
    const response = await app.inject({ url, headers });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };
  /** pod-1's best rank as every cached catalog route that renders its reference answers it. */
  const bestRanksOfPod1 = async () => [
    (await get('/v1/podcasts/episodes/ep-1')).podcast.best_rank,
    (await get('/v1/podcasts/episodes/ep-1?include=transcript')).podcast.best_rank,
    (await get('/v1/podcasts/pod-1/episodes')).data[0].podcast.best_rank,
    (await get('/v1/podcasts/episodes?podcast_id=pod-1')).data[0].podcast.best_rank,
  ];
  const expectPod1 = async (expected: object | undefined) =>
    expect(await bestRanksOfPod1()).toEqual([expected, expected, expected, expected]);

  beforeAll(async () => {
    ({ db, drop } = await createDb(engine));
    store = createPostgresEventStore(db);
    const catalog = catalogCapability({ now: () => NOW });
    app = await buildHttpApp({
      db,
      cursorKey: Buffer.alloc(32, 5),
      routes: [...(catalog.routes ?? []), rankingRoutes],
    });
    headers = (await createTenant(db)).headers;
    await ingest([
      podcastEvent({ id: 'pod-1', title: 'Harbor Lights' }),
      podcastEvent({ id: 'pod-2', title: 'Second Show', directory_ids: { apple: APPLE_2 } }),
      episodeOf({ id: 'ep-1', podcastId: 'pod-1', roles: ['HOST'] }),
      episodeOf({ id: 'ep-2', podcastId: 'pod-2', roles: ['HOST'] }),
    ]);
  }, 180_000);
  afterAll(async () => {
    await app.close();
    await store.close();
    await drop();
  });

  it('is absent for a show on no chart, and documented in /openapi.json', async () => {
    await expectPod1(undefined);
    const { components, paths } = await get('/openapi.json');
    const text = JSON.stringify({ components, paths });
    expect(text).toContain('"best_rank"');
  });

  it("follows the charts' latest captures: a new capture, a show dropping off, a late older capture, a capture sent again", async () => {
    // Cached answers of every route above are kept first: a capture must reach them.
    await expectPod1(undefined);
    await capture(
      rankingEvent({}, at('10'), [
        { rank: 1, podcast_id: 'pod-2' },
        { rank: 3, podcast_id: 'pod-1' },
      ]),
    );
    await expectPod1(best('top_podcasts', 3, '10'));

    // Rank 1 on a category chart beats rank 3; the category's slug is named.
    await capture(rankingEvent(TECH, at('10'), [{ rank: 1, podcast_id: 'pod-1' }]));
    await expectPod1(best('top_podcasts', 1, '10', 'technology'));

    // The category chart's newer capture leaves pod-1 out: its rank there is no longer live.
    await capture(rankingEvent(TECH, at('12'), [{ rank: 1, podcast_id: 'pod-2' }]));
    await expectPod1(best('top_podcasts', 3, '10'));

    // An older capture arriving late is history, not the chart's latest.
    await capture(rankingEvent(TECH, at('05'), [{ rank: 1, podcast_id: 'pod-1' }]));
    await expectPod1(best('top_podcasts', 3, '10'));

    // The latest capture sent again (a newer occurred_at) replaces it whole.
    await capture(rankingEvent({}, at('10'), [{ rank: 2, podcast_id: 'pod-1' }], '2026-11-10T07:00:00Z'));
    await expectPod1(best('top_podcasts', 2, '10'));
    // pod-2 left that capture: it ranks only on the category chart now.
    expect((await get('/v1/podcasts/episodes/ep-2')).podcast.best_rank).toEqual(
      best('top_podcasts', 1, '12', 'technology'),
    );
  });

  it("counts an Apple entry named only by the show's Apple id, on the Ranking's podcast block too, and a rebuild answers the same", async () => {
    await capture(rankingEvent({ chart_type: 'new' }, at('11'), [{ rank: 1, external_id: APPLE_2 }]));
    // Rank 1 twice: the least chart key, apple/new/us/, comes first.
    const expected = best('new', 1, '11');
    expect((await get('/v1/podcasts/episodes/ep-2')).podcast.best_rank).toEqual(expected);
    expect((await get('/v1/podcasts/pod-2/rankings')).data[0].podcast.best_rank).toEqual(expected);

    const before = [await bestRanksOfPod1(), (await get('/v1/podcasts/episodes/ep-2')).podcast];
    await rebuildProjection(db, store, chartCapturesProjection);
    expect([await bestRanksOfPod1(), (await get('/v1/podcasts/episodes/ep-2')).podcast]).toEqual(before);
  });
});
