import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Queryable } from '../../src/db/db.ts';
import { loadEpisodes } from '../../src/search/items.ts';
import { episodeEvent } from '../fixtures/events.ts';
import type { Engine } from '../support/db.ts';
import { type SearchHarness, searchHarness } from './support.ts';

// A page's episodes are read by several queries at once, the lines maybe once the index found
// them: the first failure fails the page, the others neither go unhandled nor hold the database.

const ids = ['ep-1', 'ep-2'];
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe.each<Engine>(['postgres', 'pglite'])('a failed read of a page (%s)', (engine) => {
  let h: SearchHarness;
  const unhandled: unknown[] = [];
  const record = (reason: unknown) => unhandled.push(reason);
  beforeAll(async () => {
    h = await searchHarness(engine);
    await h.ingest(ids.map((id) => episodeEvent({ id })));
  });
  afterAll(() => h?.close());
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', record);
  });
  afterEach(() => {
    process.off('unhandledRejection', record);
  });

  /** `h.db` with the segments' query failing. */
  const failing = (): Queryable => ({
    query(text, params) {
      if (text.includes('from segments')) return Promise.reject(new Error('segments failed'));
      return h.db.query(text, params);
    },
    exec: (script) => h.db.exec(script),
  });

  it('fails with the first error while the wanted lines are still coming, and fails them later unhandled nowhere', async () => {
    const wanted = settle().then((): Map<string, number[]> => {
      throw new Error('lines failed');
    });
    await expect(loadEpisodes(failing(), ids, wanted)).rejects.toThrow('segments failed');
    await settle();
    await settle();
    expect(unhandled).toEqual([]);
    // The database still answers every query.
    const parts = await loadEpisodes(h.db, ids, new Map([['ep-1', [0]]]));
    expect([...parts.keys()].sort()).toEqual(ids);
    expect(parts.get('ep-1')!.lines.map((l) => l.number)).toEqual([1]);
  });

  it('fails with the wanted lines’ error when they fail first', async () => {
    const wanted = Promise.reject(new Error('lines failed'));
    await expect(loadEpisodes(h.db, ids, wanted)).rejects.toThrow('lines failed');
    await settle();
    expect(unhandled).toEqual([]);
  });
});
