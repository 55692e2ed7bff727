import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogEpisodesProjection } from '../../projections/catalog-episodes/projection.ts';
import { podcastFormatsProjection } from '../../projections/podcast-formats/projection.ts';
import { podcastsProjection } from '../../projections/podcasts/projection.ts';
import { catalogProjections } from '../../src/catalog/capability.ts';
import type { Queryable } from '../../src/db/db.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { validateEvent } from '../../src/ingestion/validate.ts';
import {
  catchUpProjection,
  projectionSubscriber,
  rebuildProjection,
} from '../../src/subscriptions/projection-runner.ts';
import { retryParked } from '../../src/subscriptions/runner.ts';
import { createDb, ENGINES } from '../support/db.ts';
import { type CatalogHarness, catalogHarness, episodeOf, podcastEvent } from './support.ts';

const AI = { id: 'top-ai', name: 'AI', ancestry: 'technology/ai' };
const CHIPS = { id: 'top-chips', name: 'Chips', ancestry: 'technology/chips' };
const COOKING = { id: 'top-cook', name: 'Cooking', ancestry: 'food/cooking' };

/** A list's rows but for `changed`, the transaction that wrote each (0245), which differs when computed again. */
const content = (rows: Record<string, unknown>[]) => rows.map(({ changed: _, ...row }) => row);

describe.each(ENGINES)('the podcast list read model on %s', (engine) => {
  let h: CatalogHarness;
  const rows = async () =>
    content(
      (await h.db.query<Record<string, unknown>>('select * from podcast_list order by podcast_id, ancestry'))
        .rows,
    );
  /** The rows computed again from the sources, in a transaction rolled back. */
  const recomputed = async () => {
    let again: Record<string, unknown>[] = [];
    await h.db
      .transaction(async (tx) => {
        await tx.query('delete from podcast_list');
        await tx.query('select refresh_podcast_list(array(select id from podcasts))');
        again = content(
          (
            await tx.query<Record<string, unknown>>(
              'select * from podcast_list order by podcast_id, ancestry',
            )
          ).rows,
        );
        throw new Error('rolled back');
      })
      .catch((error: Error) => {
        if (error.message !== 'rolled back') throw error;
      });
    return again;
  };

  beforeAll(async () => {
    h = await catalogHarness(engine);
    await h.ingest([
      podcastEvent({ id: 'pod-a', title: 'Alpha', language: 'en-GB', popularity: 0.5, topics: [COOKING] }),
      podcastEvent({ id: 'pod-b', title: 'Beta', language: 'fr', has_video: true, topics: [AI] }),
      episodeOf({
        id: 'a1',
        podcastId: 'pod-a',
        podcastTitle: 'Alpha',
        topics: [AI],
        roles: ['HOST', 'GUEST'],
      }),
      episodeOf({ id: 'a2', podcastId: 'pod-a', podcastTitle: 'Alpha', topics: [CHIPS, AI], ads: 1 }),
      episodeOf({ id: 'a3', podcastId: 'pod-a', podcastTitle: 'Alpha', publishedAt: '2026-01-01T00:00:00Z' }),
    ]);
  });
  afterAll(() => h.close());

  it('holds a row per show and per ancestry of its topics, with its share and filter columns', async () => {
    const list = await rows();
    const of = (id: string, ancestry: string) =>
      list.find((r) => r.podcast_id === id && r.ancestry === ancestry);
    expect(list.map((r) => `${r.podcast_id} ${r.ancestry}`)).toEqual([
      'pod-a ',
      'pod-a technology',
      'pod-a technology/ai',
      'pod-a technology/chips',
      // pod-b has no tagged episodes: its declared topic counts whole
      'pod-b ',
      'pod-b technology',
      'pod-b technology/ai',
    ]);
    expect(of('pod-a', 'technology/ai')).toMatchObject({ share: 2 / 3, language: 'en', popularity: 0.5 });
    expect(of('pod-a', 'technology/chips')).toMatchObject({ share: 1 / 3, has_video: false });
    expect(of('pod-b', 'technology')).toMatchObject({
      share: 1,
      language: 'fr',
      has_video: true,
      guest_frequency: null,
    });
    expect((of('pod-a', '')!.topics as { id: string }[]).map((t) => t.id)).toEqual([
      'top-ai',
      'top-chips',
      'top-cook',
    ]);
    expect(list).toEqual(await recomputed());
  });

  it('follows every source as it changes: shows, re-sent and moved episodes, declared topics', async () => {
    await h.ingest([
      podcastEvent({ id: 'pod-a', title: 'Alpha', language: 'de', popularity: 0.9 }, '2026-11-20T11:00:00Z'),
      // a re-sent episode with other topics, and an episode moved to the show that only declared one
      episodeOf({
        id: 'a2',
        podcastId: 'pod-a',
        podcastTitle: 'Alpha',
        topics: [COOKING],
        occurredAt: '2026-11-20T11:00:00Z',
      }),
      episodeOf({
        id: 'a1',
        podcastId: 'pod-b',
        podcastTitle: 'Beta',
        topics: [CHIPS],
        occurredAt: '2026-11-20T11:00:00Z',
      }),
    ]);
    const list = await rows();
    expect(list.map((r) => `${r.podcast_id} ${r.ancestry} ${r.share}`)).toEqual([
      'pod-a  null',
      'pod-a food 0.5',
      'pod-a food/cooking 0.5',
      'pod-b  null',
      'pod-b technology 1',
      'pod-b technology/chips 1',
    ]);
    expect(list[0]).toMatchObject({ language: 'de', popularity: 0.9 });
    expect(list).toEqual(await recomputed());
  });

  it('is rebuilt with each projection it is kept from', async () => {
    const before = await rows();
    for (const projection of [podcastsProjection, podcastFormatsProjection, catalogEpisodesProjection]) {
      await rebuildProjection(h.db, h.store, projection);
      expect(await rows()).toEqual(before);
    }
  });
});

describe.each(ENGINES)('topic ancestries with an empty prefix on %s', (engine) => {
  let h: CatalogHarness;
  beforeAll(async () => {
    h = await catalogHarness(engine);
  });
  afterAll(() => h.close());

  it("applies a show's and an episode's topic whose ancestry is '' or starts with '/': the show's own row stays its only '' row", async () => {
    const empty = { id: 'top-empty', name: 'Empty', ancestry: '' };
    const rooted = { id: 'top-rooted', name: 'Rooted', ancestry: '/news//world' };
    const events = [
      podcastEvent({ id: 'pod-d', title: 'Declared', topics: [empty, rooted] }),
      podcastEvent({ id: 'pod-e', title: 'Episodes' }),
      episodeOf({ id: 'e1', podcastId: 'pod-e', podcastTitle: 'Episodes', topics: [empty, rooted] }),
    ];
    expect(events.flatMap((e, i) => validateEvent(e, `/events/${i}`))).toEqual([]);
    await ingestEvents(h.store, events);
    // No retries: an event that fails is parked at once.
    for (const projection of catalogProjections)
      await catchUpProjection(h.db, h.store, projection, { retries: 0 });
    const { rows: parked } = await h.db.query('select subscription, type, error from parked_events');
    expect(parked).toEqual([]);
    expect(await listRows(h.db)).toEqual(ODD_ANCESTRIES_LIST);
    const { rows: shares } = await h.db.query("select * from podcast_topic_shares where ancestry = ''");
    expect(shares).toEqual([]);
  });
});

describe.each(ENGINES)(
  'a store written under the old topic_prefixes rule, migrated by 0255, on %s',
  (engine) => {
    it("applies the parked events after the migration, and a rebuild of each source's projection gives the same list", async () => {
      const { db, drop } = await createDb(engine, { migratedBefore: 255 });
      const store = createPostgresEventStore(db);
      try {
        const empty = { id: 'top-empty', name: 'Empty', ancestry: '' };
        const rooted = { id: 'top-rooted', name: 'Rooted', ancestry: '/news//world' };
        // The episode before its show: its '' share is written while the show has no list rows.
        await ingestEvents(store, [
          episodeOf({ id: 'e1', podcastId: 'pod-e', podcastTitle: 'Episodes', topics: [empty, rooted] }),
        ]);
        for (const projection of catalogProjections)
          await catchUpProjection(db, store, projection, { retries: 0 });
        await ingestEvents(store, [
          podcastEvent({ id: 'pod-d', title: 'Declared', topics: [empty, rooted] }),
          podcastEvent({ id: 'pod-e', title: 'Episodes' }),
        ]);
        for (const projection of catalogProjections)
          await catchUpProjection(db, store, projection, { retries: 0 });
        const parked = async () =>
          (await db.query<{ subscription: string }>('select subscription from parked_events')).rows;
        expect((await parked()).length).toBeGreaterThan(0);
        const emptyShares = async () =>
          (await db.query("select podcast_id from podcast_topic_shares where ancestry = ''")).rows;
        expect(await emptyShares()).toEqual([{ podcast_id: 'pod-e' }]);

        await migrate(db);
        for (const projection of catalogProjections)
          await retryParked(db, store, projectionSubscriber(projection));
        expect(await parked()).toEqual([]);
        const list = () => listRows(db);
        const expected = ODD_ANCESTRIES_LIST;
        expect(await list()).toEqual(expected);
        expect(await emptyShares()).toEqual([]);
        for (const projection of [podcastsProjection, podcastFormatsProjection, catalogEpisodesProjection]) {
          await rebuildProjection(db, store, projection, { retries: 0 });
          expect(await parked(), projection.name).toEqual([]);
          expect(await list(), projection.name).toEqual(expected);
        }
      } finally {
        await store.close();
        await drop();
      }
    });
  },
);

/** The list's rows, a line each: show, ancestry and share. */
async function listRows(db: Queryable) {
  const { rows } = await db.query<{ row: string }>(
    `select podcast_id || ' [' || ancestry || '] ' || coalesce(share::text, '-') as row
       from podcast_list order by podcast_id, ancestry`,
  );
  return rows.map((r) => r.row);
}

/** The list of two shows whose topics have the ancestries '' and '/news//world': no '' topic row. */
const ODD_ANCESTRIES_LIST = [
  'pod-d [] -',
  'pod-d [/news] 1',
  'pod-d [/news/] 1',
  'pod-d [/news//world] 1',
  'pod-e [] -',
  'pod-e [/news] 1',
  'pod-e [/news/] 1',
  'pod-e [/news//world] 1',
];
