import { afterAll, describe, expect, it } from 'vitest';
import { catalogEpisodesProjection } from '../../projections/catalog-episodes/projection.ts';
import { searchPassagesProjection } from '../../projections/search-passages/projection.ts';
import { searchEpisodes } from '../../projections/search-passages/queries.ts';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { episodeEvent } from '../fixtures/events.ts';
import { createDb, ENGINES } from '../support/db.ts';
import { catchUp } from '../support/projections.ts';

const ROWS = 200;

describe.each(ENGINES)('migration 0200 on %s', (engine) => {
  let drop: (() => Promise<void>) | undefined;
  afterAll(() => drop?.());

  it('leaves the old index in place and fills the new rows from the event log', async () => {
    const made = await createDb(engine, { migratedBefore: ROWS });
    drop = made.drop;
    const { db } = made;
    const store = createPostgresEventStore(db);
    await ingestEvents(store, [
      episodeEvent({ id: 'ep-old', lines: ['The wombat', 'x', 'x', 'x', 'fund grows.', 'x', 'wombat'] }),
    ]);
    // The previous version indexed the episode in its layout.
    await db.query(
      `insert into search_passages (episode_id, start, words) values ('ep-old', 0, $1::tsvector)`,
      ["'wombat':2B 'fund':10A"],
    );
    expect(await migrate(db, loadMigrations())).toContain('0200_search_passage_rows');
    await catchUp(db, store, catalogEpisodesProjection);
    // The projection of the new rows has a checkpoint of its own: it starts from the first event.
    expect(await catchUp(db, store, searchPassagesProjection)).toBe(1);
    const hits = await searchEpisodes(
      db,
      {},
      { terms: [['wombat'], ['fund']], all: true },
      'relevance',
      5,
      0,
    );
    expect(hits.map((h) => [h.episode_id, h.starts])).toEqual([['ep-old', [0, 2, 3, 4]]]);
    const { rows } = await db.query<{ n: number }>('select count(*)::int as n from search_passages');
    expect(rows[0]!.n).toBe(1);
  });
});
