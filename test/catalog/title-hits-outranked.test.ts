// A search given the list index's title matches leaves out those that cannot reach its page
// (withoutOutranked, docs/catalog.md "Title matches in memory"): its pages are the trigram index's,
// also when a show's episodes or description raise its score above its title's, and when shows of
// the kept matches are written or removed after the index's snapshot.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  listPodcastStamps,
  type PodcastFilters,
  type SeenTitleHits,
  titleQuery,
  withoutOutranked,
} from '../../projections/podcasts/queries.ts';
import { PodcastListIndex } from '../../src/catalog/podcast-list-index.ts';
import { searchKey } from '../../src/catalog/search-key.ts';
import type { IngestEvent } from '../../src/ingestion/events.ts';
import { ENGINES } from '../support/db.ts';
import { prng } from '../support/synthetic.ts';
import { type CatalogHarness, catalogHarness, episodeOf, NOW, podcastEvent } from './support.ts';

const RAISED = 'Harbor Lantern Evening Tales of the long winter nights by the sea';
const WORDS = ['kitchen', 'stories', 'daily', 'lab', 'video', 'history', 'science', 'night', 'garden'];

function catalog(seed: number, shows: number): IngestEvent[] {
  const random = prng(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)] as T;
  const words = (min: number, max: number) =>
    Array.from({ length: min + Math.floor(random() * (max - min + 1)) }, () => pick(WORDS)).join(' ');
  const events: IngestEvent[] = [];
  for (let p = 0; p < shows; p++) {
    const id = `pod-${p}`;
    events.push(
      podcastEvent({
        id,
        title: `${random() < 0.3 ? 'The ' : ''}${words(1, 4)}`,
        // ties on purpose
        ...(random() < 0.15 ? {} : { popularity: pick([0, 0.2, 0.5, 0.5, 0.9, random()]) }),
        ...(random() < 0.4 ? { description: words(2, 6) } : {}),
      }),
    );
    const episodes = Math.floor(random() * 4);
    for (let n = 0; n < episodes; n++)
      events.push(episodeOf({ id: `${id}-e${n}`, podcastId: id, title: words(3, 7) }));
  }
  return events;
}

describe.each(ENGINES)('title matches left out of a search on %s', (engine) => {
  let h: CatalogHarness;
  const index = new PodcastListIndex(2 ** 24);

  beforeAll(async () => {
    h = await catalogHarness(engine);
    await h.ingest(catalog(3, 150));
    // a show whose title starts with q but alone ranks after others', raised above them by an
    // episode's title (a fuzzy match: the show keeps its title's quality, prefix, with that score)
    await h.ingest([
      ...['one', 'two', 'three', 'four', 'five', 'six'].map((name, i) =>
        podcastEvent({
          id: `harbor-${name}`,
          title: `Harbor Lantern Evening Tales Volume ${name}`,
          popularity: i / 10,
        }),
      ),
      podcastEvent({ id: 'raised', title: RAISED, popularity: 0 }),
      episodeOf({
        id: 'raised-e',
        podcastId: 'raised',
        podcastTitle: RAISED,
        title: 'Harbor lantern evening tales',
      }),
    ]);
  }, 300_000);
  afterAll(() => h?.close());

  async function hitsOf(q: string): Promise<SeenTitleHits> {
    for (let i = 0; i < 200; i++) {
      const hits = await index.titleHits(h.db, titleQuery(q));
      if (hits) return hits;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('the index never loaded');
  }

  it('finds the pages the trigram index finds, episodes and descriptions raising scores', async () => {
    const random = prng(5);
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)] as T;
    let pruned = 0;
    let raised = 0;
    const cases = 300;
    for (let i = 0; i < cases; i++) {
      const count = random() < 0.5 ? 1 + Math.floor(random() * 3) : 4 + Math.floor(random() * 3);
      const q =
        random() < 0.2
          ? 'harbor lantern evening tales'
          : searchKey(Array.from({ length: count }, () => pick(WORDS)).join(' '));
      const f: PodcastFilters = { q, sort: random() < 0.7 ? 'relevance' : 'popularity', now: NOW };
      const limit = 1 + Math.floor(random() * 10);
      const offset = random() < 0.4 ? Math.floor(random() * 8) : 0;
      const titleHits = await hitsOf(q);
      const fromSql = await listPodcastStamps(h.db, f, limit, offset);
      expect(
        await listPodcastStamps(h.db, { ...f, titleHits }, limit, offset),
        JSON.stringify({ f, limit, offset }),
      ).toEqual(fromSql);
      const top = { rows: offset + limit, sort: f.sort };
      if (withoutOutranked(titleHits, top, 1)) pruned++;
      // a show on the page that its title's score alone would have left out
      const byTitleAlone = withoutOutranked(titleHits, top, 0);
      if (byTitleAlone) {
        const titleOnly = new Set(byTitleAlone.ids);
        if (fromSql.some((stamp) => titleHits.ids.includes(stamp.id) && !titleOnly.has(stamp.id))) raised++;
      }
    }
    expect(pruned).toBeGreaterThan(cases / 10);
    expect(raised).toBeGreaterThan(0);
  }, 300_000);

  it('reads the page again when a kept show was written or removed since the snapshot', async () => {
    const names = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
    await h.ingest(
      names.map((name, i) =>
        podcastEvent({ id: `kept-${name}`, title: `Garden Notes ${name}`, popularity: i / 10 }),
      ),
    );
    for (const sort of ['relevance', 'popularity'] as const) {
      const f: PodcastFilters = { q: 'garden notes', sort, now: NOW };
      const titleHits = await hitsOf('garden notes');
      expect(withoutOutranked(titleHits, { rows: 3, sort }, 0.25)?.ids.length).toBeLessThan(
        titleHits.ids.length,
      );
      // the page's shows, as the index saw them, change: two renamed away from q, one removed; and
      // a show the index did not see matches first
      const [first, second, third] = (await listPodcastStamps(h.db, f, 3, 0)).map((stamp) => stamp.id);
      await h.ingest([
        ...[first, second].map((id) =>
          podcastEvent({ id: id as string, title: `renamed ${sort}` }, '2026-11-20T11:00:00Z'),
        ),
        podcastEvent({ id: `new-${sort}`, title: 'Garden Notes', popularity: 1 }),
      ]);
      await h.db.query('delete from podcasts where id = $1', [third]);
      const fromSql = await listPodcastStamps(h.db, f, 3, 0);
      expect(fromSql).toHaveLength(3);
      for (const gone of [first, third]) expect(fromSql.map((stamp) => stamp.id)).not.toContain(gone);
      expect(fromSql[0]?.id).toBe(`new-${sort}`);
      expect(await listPodcastStamps(h.db, { ...f, titleHits }, 3, 0)).toEqual(fromSql);
    }
  }, 300_000);
});

describe.each(ENGINES)('a search of more than 2,000 title matches on %s', (engine) => {
  let h: CatalogHarness;
  const index = new PodcastListIndex(2 ** 24);
  const SHOWS = 2_500;

  beforeAll(async () => {
    h = await catalogHarness(engine);
    // ties on purpose: most titles score alike, and a few popularity values (some none)
    await h.ingest(
      Array.from({ length: SHOWS }, (_, i) =>
        podcastEvent({
          id: `many-${i}`,
          title: `Show Number ${i}`,
          language: i % 2 ? 'en' : 'fr',
          ...(i % 5 === 0 ? {} : { popularity: (i % 4) / 4 }),
        }),
      ),
    );
  }, 300_000);
  afterAll(() => h?.close());

  it('sends the matches that can reach a search-only page, and leaves a filtered one to SQL', async () => {
    const random = prng(9);
    for (let i = 0; i < 40; i++) {
      const q = ['show number', 'show numbr', 'number'][i % 3] as string;
      const f: PodcastFilters = {
        q,
        sort: i % 2 ? 'relevance' : 'popularity',
        now: NOW,
        ...(i % 4 === 3 ? { language: 'en' } : {}),
      };
      const limit = 1 + Math.floor(random() * 25);
      const offset = random() < 0.4 ? Math.floor(random() * 200) : 0;
      let titleHits: SeenTitleHits | undefined;
      for (let wait = 0; !titleHits && wait < 200; wait++) {
        titleHits = await index.titleHits(h.db, titleQuery(q));
        if (!titleHits) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      if (!titleHits) throw new Error('the index never loaded');
      expect(titleHits.ids.length).toBeGreaterThan(2_000);
      if (!f.language)
        expect(
          withoutOutranked(titleHits, { rows: offset + limit, sort: f.sort }, 0.25)?.ids.length,
        ).toBeLessThan(2_000);
      expect(
        await listPodcastStamps(h.db, { ...f, titleHits }, limit, offset),
        JSON.stringify({ f, limit, offset }),
      ).toEqual(await listPodcastStamps(h.db, f, limit, offset));
    }
  }, 300_000);
});
