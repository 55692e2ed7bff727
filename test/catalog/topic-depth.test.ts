import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { catalogProjections } from '../../src/catalog/capability.ts';
import { ancestryPathHash } from '../../src/catalog/topics.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { createDb, ENGINES } from '../support/db.ts';
import { catchUp } from '../support/projections.ts';
import { type CatalogHarness, catalogHarness, episodeOf, podcastEvent } from './support.ts';

// A topic counts under its whole ancestry and the first 8 levels above it (docs/catalog.md,
// "Topics"): an ancestry of 145 levels (289 characters, within the schema's 300) gave its show a list
// row and a topic share per level and topic.
const levels = (count: number) => Array.from({ length: count }, (_, i) => String.fromCharCode(97 + (i % 26)));
const deep = levels(145).join('/');
const prefix = (depth: number) => levels(depth).join('/');

describe.each(ENGINES)('topic ancestries on %s', (engine) => {
  let h: CatalogHarness;
  const ids = async (topic: string) =>
    (await h.get('/v1/podcasts', { topic_id: topic })).json().data.map((p: { id: string }) => p.id);
  const shares = async (podcastId: string) =>
    (
      await h.db.query<{ n: number }>(
        'select count(*)::int as n from podcast_topic_shares where podcast_id = $1',
        [podcastId],
      )
    ).rows[0]!.n;

  beforeAll(async () => {
    h = await catalogHarness(engine);
    await h.ingest([
      episodeOf({
        id: 'ep-deep',
        podcastId: 'pod-deep',
        topics: Array.from({ length: 20 }, (_, t) => ({
          id: `top-${t}`,
          name: `Topic ${t}`,
          ancestry: `${deep}/t${t}`,
        })),
      }),
      podcastEvent({
        id: 'pod-declared',
        title: 'Declared',
        topics: [{ id: 'top-d', name: 'D', ancestry: deep }],
      }),
    ]);
  });
  afterAll(() => h?.close());

  it('counts a topic under its first 8 levels and its whole ancestry, not the levels between', async () => {
    // 8 shared levels, then each topic's whole ancestry: 28 shares, where every level made 165.
    expect(await shares('pod-deep')).toBe(28);
    for (const depth of [1, 8]) expect(await ids(prefix(depth))).toEqual(['pod-declared', 'pod-deep']);
    expect(await ids(ancestryPathHash(`${deep}/t3`))).toEqual(['pod-deep']);
    expect(await ids('top-3')).toEqual(['pod-deep']);
    expect(await ids(prefix(9))).toEqual([]);
    expect(await ids('top-d')).toEqual(['pod-declared']);
    const { rows } = await h.db.query<{ n: number }>(
      "select count(*)::int as n from podcast_list where podcast_id = 'pod-deep'",
    );
    expect(rows[0]!.n).toBe(1 + 28);
  });

  it('keeps what the first levels were before: a 9-level ancestry counts under all of them', async () => {
    const nine = prefix(9);
    await h.ingest([
      episodeOf({
        id: 'ep-nine',
        podcastId: 'pod-nine',
        topics: [{ id: 'top-9', name: 'Nine', ancestry: nine }],
      }),
    ]);
    for (let depth = 1; depth <= 9; depth++) expect(await ids(prefix(depth))).toContain('pod-nine');
    expect(await shares('pod-nine')).toBe(9);
  });
});

describe.each(ENGINES)('migration 0261 (topic ancestry depth) on %s', (engine) => {
  let drop: (() => Promise<void>) | undefined;
  afterAll(() => drop?.());

  it('counts the shares and list rows written under the old rule again', async () => {
    const made = await createDb(engine, { migratedBefore: 261 });
    drop = made.drop;
    const { db } = made;
    const store = createPostgresEventStore(db);
    try {
      await ingestEvents(store, [
        episodeOf({
          id: 'ep-deep',
          podcastId: 'pod-deep',
          topics: [{ id: 'top-deep', name: 'Deep', ancestry: deep }],
        }),
        episodeOf({
          id: 'ep-flat',
          podcastId: 'pod-flat',
          topics: [{ id: 'top-flat', name: 'Flat', ancestry: 'a/b/c' }],
        }),
        podcastEvent({
          id: 'pod-declared',
          title: 'Declared',
          topics: [{ id: 'top-d', name: 'D', ancestry: deep }],
        }),
      ]);
      for (const projection of [entitiesProjection, ...catalogProjections])
        await catchUp(db, store, projection);
      const counts = async () =>
        (
          await db.query<{ id: string; shares: number; rows: number }>(
            `select p.id, (select count(*)::int from podcast_topic_shares s where s.podcast_id = p.id) as shares,
                    (select count(*)::int from podcast_list l where l.podcast_id = p.id) as rows
               from podcasts p order by p.id`,
          )
        ).rows;
      expect(await counts()).toEqual([
        { id: 'pod-declared', shares: 0, rows: 1 + 145 },
        { id: 'pod-deep', shares: 145, rows: 1 + 145 },
        { id: 'pod-flat', shares: 3, rows: 1 + 3 },
      ]);
      expect(await migrate(db)).toContain('0261_topic_prefixes_depth');
      expect(await counts()).toEqual([
        { id: 'pod-declared', shares: 0, rows: 1 + 9 },
        { id: 'pod-deep', shares: 9, rows: 1 + 9 },
        { id: 'pod-flat', shares: 3, rows: 1 + 3 },
      ]);
      // The declared topics' index answers by the new rule.
      const { rows } = await db.query<{ id: string }>(
        `select id from podcasts where topic_prefixes(declared_topic_ancestries(topics)) @> array[$1::text]`,
        [prefix(9)],
      );
      expect(rows).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
