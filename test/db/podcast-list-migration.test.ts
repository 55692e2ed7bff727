import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogProjections } from '../../src/catalog/capability.ts';
import type { Db } from '../../src/db/db.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { episodeOf, podcastEvent } from '../catalog/support.ts';
import { createDb, ENGINES } from '../support/db.ts';
import { catchUp } from '../support/projections.ts';

describe.each(ENGINES)('migration 0221 (podcast list read model) on %s', (engine) => {
  let db: Db;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    ({ db, drop } = await createDb(engine, { migratedBefore: 221 }));
    // The projections of this version take the list's locks before they write (0223): a no-op
    // stands in for them on the schema before the list read model.
    await db.query(`create function lock_podcast_list(ids text[]) returns void language sql as 'select'`);
  });
  afterAll(() => drop());

  it('fills the list read model from the catalog already there', async () => {
    const store = createPostgresEventStore(db);
    const topic = { id: 'top-ai', name: 'AI', ancestry: 'technology/ai' };
    await ingestEvents(store, [
      podcastEvent({ id: 'pod-1', title: 'One', language: 'en-US', popularity: 0.3 }),
      podcastEvent({ id: 'pod-2', title: 'Two', topics: [topic] }),
      episodeOf({ id: 'e1', podcastId: 'pod-1', podcastTitle: 'One', topics: [topic] }),
      episodeOf({ id: 'e2', podcastId: 'pod-1', podcastTitle: 'One' }),
    ]);
    for (const projection of catalogProjections) await catchUp(db, store, projection);
    await store.close();
    expect(await migrate(db)).toContain('0221_podcast_list');
    const { rows } = await db.query<{ key: string }>(
      `select podcast_id || ' ' || ancestry || ' ' || coalesce(share::text, '-') || ' ' || coalesce(language, '-')
              || ' ' || json_array_length(coalesce(topics, '[]')) as key
         from podcast_list order by podcast_id, ancestry`,
    );
    expect(rows.map((r) => r.key)).toEqual([
      'pod-1  - en 1',
      'pod-1 technology 0.5 en 0',
      'pod-1 technology/ai 0.5 en 0',
      'pod-2  - - 1',
      'pod-2 technology 1 - 0',
      'pod-2 technology/ai 1 - 0',
    ]);
  });
});
