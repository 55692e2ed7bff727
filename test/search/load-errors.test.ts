import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queryable } from '../../src/db/db.ts';
import { loadEpisodes } from '../../src/search/parts.ts';
import { episodeEvent } from '../fixtures/events.ts';
import type { Engine } from '../support/db.ts';
import { type SearchHarness, searchHarness } from './support.ts';

// A page's episodes are read in one statement: its failure fails the page, and the database
// still answers afterwards.

const ids = ['ep-1', 'ep-2'];

describe.each<Engine>(['postgres', 'pglite'])('a failed read of a page (%s)', (engine) => {
  let h: SearchHarness;
  beforeAll(async () => {
    h = await searchHarness(engine);
    await h.ingest(ids.map((id) => episodeEvent({ id })));
  });
  afterAll(() => h?.close());

  /** `h.db` with the page's read failing. */
  const failing = (): Queryable => ({
    query(text, params) {
      if (text.includes('from segments')) return Promise.reject(new Error('page failed'));
      return h.db.query(text, params);
    },
    exec: (script) => h.db.exec(script),
  });

  it('fails with the read’s error, and the database still answers', async () => {
    await expect(loadEpisodes(failing(), ids, new Map([['ep-1', [0]]]))).rejects.toThrow('page failed');
    const parts = await loadEpisodes(h.db, ids, new Map([['ep-1', [0]]]));
    expect([...parts.keys()].sort()).toEqual(ids);
    expect(parts.get('ep-1')!.lines.map((l) => l.number)).toEqual([1]);
    expect(parts.get('ep-2')!.lines.map((l) => l.number)).toEqual([1, 2, 3]);
  });
});
