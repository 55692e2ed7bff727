import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogEpisodesProjection } from '../../projections/catalog-episodes/projection.ts';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { catalogCapability, catalogProjections } from '../../src/catalog/capability.ts';
import type { Db } from '../../src/db/db.ts';
import type { EventStore } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import type { IngestEvent } from '../../src/ingestion/events.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { rebuildProjection } from '../../src/subscriptions/projection-runner.ts';
import { entityEvent } from '../fixtures/events.ts';
import { createDb } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';
import { catchUp } from '../support/projections.ts';
import { episodeOf, NOW, podcastEvent } from './support.ts';

const DAY = 86_400_000;
const READ_MODEL = /\b(podcasts|catalog_episodes|transcripts|podcast_formats|podcast_topic_shares)\b/;

describe('the catalog response cache', () => {
  let db: Db;
  let drop: () => Promise<void>;
  let store: EventStore;
  let headers: Record<string, string>;
  let now = NOW;
  /** Statements that read a catalog read model, since the last reset. */
  const reads: string[] = [];

  const appWith = async (cacheBytes?: number) => {
    const counting: Db = {
      ...db,
      query: (text, params) => {
        if (READ_MODEL.test(text)) reads.push(text);
        return db.query(text, params);
      },
    };
    const capability = catalogCapability({
      now: () => now,
      ...(cacheBytes === undefined ? {} : { cacheBytes }),
    });
    return buildHttpApp({ db: counting, cursorKey: Buffer.alloc(32, 3), routes: capability.routes ?? [] });
  };
  const ingest = async (events: IngestEvent[]) => {
    await ingestEvents(store, events);
    for (const projection of [entitiesProjection, ...catalogProjections])
      await catchUp(db, store, projection);
  };

  beforeAll(async () => {
    ({ db, drop } = await createDb('postgres'));
    store = createPostgresEventStore(db);
    ({ headers } = await createTenant(db));
    await ingest([
      podcastEvent({ id: 'pod-1', title: 'Harbor Lights', popularity: 0.5 }),
      episodeOf({
        id: 'ep-1',
        podcastId: 'pod-1',
        roles: ['HOST', 'GUEST'],
        publishedAt: new Date(NOW.getTime() - 89.5 * DAY).toISOString(),
      }),
    ]);
  });
  afterAll(async () => {
    await store.close();
    await drop();
  });

  it('serves a repeated search, episode and srt transcript without reading the read models again', async () => {
    const app = await appWith();
    for (const url of [
      '/v1/podcasts?q=harbor%20lites',
      '/v1/podcasts/episodes/ep-1?include=transcript,speakers',
      '/v1/podcasts/episodes/ep-1/transcript?format=srt',
    ]) {
      const first = await app.inject({ url, headers });
      expect(first.statusCode).toBe(200);
      reads.length = 0;
      const again = await app.inject({ url, headers });
      expect(reads).toEqual([]);
      expect(again.statusCode).toBe(200);
      expect(again.body).toBe(first.body);
      expect(again.headers['content-type']).toBe(first.headers['content-type']);
    }
    await app.close();
  });

  it('reads the read models again once an event has moved them', async () => {
    const app = await appWith();
    const ids = async () =>
      (await app.inject({ url: '/v1/podcasts', headers })).json().data.map((p: { id: string }) => p.id);
    expect(await ids()).toEqual(['pod-1']);
    await ingest([podcastEvent({ id: 'pod-2', title: 'Harbor Nights', popularity: 0.9 })]);
    expect(await ids()).toEqual(['pod-2', 'pod-1']);
    await app.close();
  });

  it('computes again once an entity a speaker names is upserted, though only the entities read model moved', async () => {
    const app = await appWith();
    await ingest([
      entityEvent({ id: 'ent-kept', name: 'Kept Name' }),
      episodeOf({
        id: 'ep-ent',
        podcastId: 'pod-ent',
        extra: { speakers: [{ id: 'k', name: 'Kept', role: 'GUEST', entity_id: 'ent-kept' }] },
      }),
    ]);
    const url = '/v1/podcasts/episodes/ep-ent?include=speakers';
    const entity = async () => (await app.inject({ url, headers })).json().speakers[0].entity;
    expect(await entity()).toMatchObject({ name: 'Kept Name' });
    reads.length = 0;
    expect(await entity()).toMatchObject({ name: 'Kept Name' });
    expect(reads).toEqual([]);
    // Only the entities read model moves (each projection follows the store on its own).
    await ingestEvents(store, [entityEvent({ id: 'ent-kept', name: 'New Name' }, '2026-11-20T11:00:00Z')]);
    await catchUp(db, store, entitiesProjection);
    expect(await entity()).toMatchObject({ id: 'ent-kept', name: 'New Name' });
    await app.close();
  });

  it('reads them again once a time-derived value can have changed: the episode leaves the 90-day window', async () => {
    const app = await appWith();
    const format = async () => (await app.inject({ url: '/v1/podcasts/pod-1/format', headers })).json();
    now = NOW;
    expect(await format()).toMatchObject({ publishing_status: 'active' });
    now = new Date(NOW.getTime() + DAY);
    reads.length = 0;
    expect(await format()).toMatchObject({ publishing_status: 'dormant', episodes_per_week: 0 });
    expect(reads).not.toEqual([]);
    now = NOW;
    await app.close();
  });

  it('keeps nothing when its size is 0 (EARSHOT_CATALOG_CACHE_MB=0)', async () => {
    const app = await appWith(0);
    await app.inject({ url: '/v1/podcasts?q=harbor%20lights', headers });
    reads.length = 0;
    expect((await app.inject({ url: '/v1/podcasts?q=harbor%20lights', headers })).statusCode).toBe(200);
    expect(reads).not.toEqual([]);
    await app.close();
  });

  it('keeps no error answers', async () => {
    const app = await appWith();
    expect((await app.inject({ url: '/v1/podcasts/episodes/ep-9', headers })).statusCode).toBe(404);
    await ingest([episodeOf({ id: 'ep-9', podcastId: 'pod-1' })]);
    expect((await app.inject({ url: '/v1/podcasts/episodes/ep-9', headers })).statusCode).toBe(200);
    await app.close();
  });

  it('still asks every caller for a valid key, and answers HEAD and then GET with the whole body', async () => {
    const app = await appWith();
    const url = '/v1/podcasts/episodes/ep-1';
    expect((await app.inject({ url, headers })).statusCode).toBe(200);
    expect((await app.inject({ url })).statusCode).toBe(401);
    expect((await app.inject({ url, headers: { 'x-api-key': 'not-a-key' } })).statusCode).toBe(401);
    const head = await app.inject({ method: 'HEAD', url: '/v1/podcasts/pod-1/format', headers });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    const get = await app.inject({ url: '/v1/podcasts/pod-1/format', headers });
    expect(get.json()).toMatchObject({ analyzed_episodes: 1, publishing_status: 'active' });
    expect(get.headers['content-length']).toBe(head.headers['content-length']);
    await app.close();
  });

  it("counts each answer's URL and bookkeeping towards its size, evicts the least recently used, and keeps no answer over a quarter of it", async () => {
    // 200 short answers (an empty page, 28 bytes) under URLs ten times longer: the bodies alone
    // would fit in 20 kB, the entries do not, so the first ones go, except one read again and again.
    const app = await appWith(20_000);
    const url = (i: number) => `/v1/podcasts/search?q=${String(i).padStart(4, '0')}${'zq'.repeat(95)}`;
    for (let i = 0; i < 200; i++) {
      const answer = await app.inject({ url: url(i), headers });
      expect(answer.json()).toEqual({ data: [], has_more: false });
      if (i % 10 === 9) await app.inject({ url: url(0), headers });
    }
    const readAgain = async (u: string) => {
      reads.length = 0;
      expect((await app.inject({ url: u, headers })).statusCode).toBe(200);
      return reads.length > 0;
    };
    expect(await readAgain(url(199))).toBe(false);
    expect(await readAgain(url(0))).toBe(false);
    expect(await readAgain(url(1))).toBe(true);
    await app.close();
    // An answer over a quarter of the size is computed every time; a smaller one is kept. With
    // the URL and bookkeeping, the empty page takes about 0.8 kB, the transcript about 1.5 kB.
    const small = await appWith(4_400);
    const keptAgain = async (u: string) => {
      await small.inject({ url: u, headers });
      reads.length = 0;
      expect((await small.inject({ url: u, headers })).statusCode).toBe(200);
      return reads.length === 0;
    };
    expect(await keptAgain('/v1/podcasts/search?q=nothing')).toBe(true);
    expect(await keptAgain('/v1/podcasts/episodes/ep-1?include=transcript,speakers')).toBe(false);
    await small.close();
  });

  it('computes again after a rebuild that ends at the same position with different rows', async () => {
    const app = await appWith();
    const url = '/v1/podcasts/episodes/ep-1';
    const title = async () => (await app.inject({ url, headers })).json().title;
    // Rows a projection's earlier code wrote wrongly; `earshot projections rebuild` puts them right.
    await db.query("update catalog_episodes set title = 'Written wrongly' where id = 'ep-1'");
    expect(await title()).toBe('Written wrongly');
    const positions = async () =>
      (await db.query('select name, position from projection_checkpoints order by name')).rows;
    const before = await positions();
    await rebuildProjection(db, store, catalogEpisodesProjection);
    expect(await positions()).toEqual(before);
    expect(await title()).toBe('Episode ep-1');
    await app.close();
  });
});
