import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { episodesProjection } from '../../../projections/episodes/projection.ts';
import { episodesPublishedBetween } from '../../../projections/episodes/queries.ts';
import type { Db } from '../../../src/db/db.ts';
import type { EventStore } from '../../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../../src/eventstore/postgres.ts';
import { ingestEvents } from '../../../src/ingestion/ingest.ts';
import { episodeEvent } from '../../fixtures/events.ts';
import { project } from '../../matching/support.ts';
import { createDb } from '../../support/db.ts';

// Episodes inside one millisecond, apart by microseconds only, with ties on one microsecond, and
// two a millisecond before and after; the backfill and alert previews read them a page at a time.
const MICROS = ['999', '500', '500', '500', '400', '301', '300', '300', '002', '001', '000'];
const published = [
  '2026-11-18T06:00:00.124Z',
  ...MICROS.map((us) => `2026-11-18T06:00:00.123${us}Z`),
  '2026-11-18T06:00:00.122Z',
];
const EPISODES = published.map((at, i) => ({ id: `ep-${String(i).padStart(2, '0')}`, at }));

let db: Db;
let store: EventStore;
let drop: () => Promise<void>;

beforeAll(async () => {
  ({ db, drop } = await createDb('postgres'));
  store = createPostgresEventStore(db);
  await ingestEvents(
    store,
    EPISODES.map(({ id, at }) => episodeEvent({ id, publishedAt: at })),
  );
  await project(db, store, episodesProjection);
});
afterAll(async () => {
  await store?.close();
  await drop?.();
});

async function idsBetween(pageSize: number): Promise<string[]> {
  const ids: string[] = [];
  for await (const { episode } of episodesPublishedBetween(
    db,
    new Date('2026-11-18T00:00:00Z'),
    new Date('2026-11-19T00:00:00Z'),
    pageSize,
  ))
    ids.push(episode.episode.id);
  return ids;
}

describe('episodes published between two instants, page by page', () => {
  it('reads every episode once, newest first to the microsecond, at any page size', async () => {
    const newestFirst = [...EPISODES]
      .sort((a, b) => (a.at === b.at ? b.id.localeCompare(a.id) : b.at.localeCompare(a.at)))
      .map((e) => e.id);
    expect(await idsBetween(100)).toEqual(newestFirst);
    for (const pageSize of [1, 2, 3, 4, 5]) expect(await idsBetween(pageSize)).toEqual(newestFirst);
  });
});
