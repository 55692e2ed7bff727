import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESCRIPTION_KEY_CHARS } from '../../projections/podcasts/projection.ts';
import { searchKey } from '../../src/catalog/search-key.ts';
import { validateEvent } from '../../src/ingestion/validate.ts';
import { type CatalogHarness, catalogHarness, podcastEvent } from './support.ts';

/**
 * 99,000 characters of squared katakana words ('㌖' folds to six letters), each word 110 of them and
 * different from the others: folded, about 1.5 MB of distinct words, more than a tsvector holds.
 */
function expandingWords(): string {
  const squares: string[] = [];
  for (let c = 0x3300; c <= 0x3357; c++)
    if (searchKey(String.fromCharCode(c)).length >= 5) squares.push(String.fromCharCode(c));
  let seed = 1;
  const words: string[] = [];
  for (let chars = 0; chars < 99_000; chars += 111) {
    let word = '';
    for (let k = 0; k < 110; k++) {
      seed = (seed * 48_271) % 2_147_483_647;
      word += squares[seed % squares.length];
    }
    words.push(word);
  }
  return words.join(' ');
}

describe("a podcast description's search key", () => {
  let h: CatalogHarness;
  const description = `Zymurgy ${expandingWords()} tailword`;
  const event = podcastEvent({ id: 'pod-wide', title: 'Wide Show', description });

  beforeAll(async () => {
    h = await catalogHarness('postgres');
    await h.ingest([event, podcastEvent({ id: 'pod-plain', title: 'Plain Show', description: 'tailword' })]);
  });
  afterAll(() => h.close());

  it('keeps its first DESCRIPTION_KEY_CHARS characters, so that a folding-swollen description is stored, not parked', async () => {
    expect(description.length).toBeLessThanOrEqual(100_000);
    expect(validateEvent(event)).toEqual([]);
    expect(searchKey(description).length).toBeGreaterThan(4 * DESCRIPTION_KEY_CHARS);
    const parked = await h.db.query('select subscription, error from parked_events');
    expect(parked.rows).toEqual([]);
    const { rows } = await h.db.query<{ key: string; description: string }>(
      "select search_description as key, description from podcasts where id = 'pod-wide'",
    );
    expect(rows[0]!.description).toBe(description);
    expect(rows[0]!.key.length).toBeGreaterThan(DESCRIPTION_KEY_CHARS - 200);
    expect(rows[0]!.key.length).toBeLessThanOrEqual(DESCRIPTION_KEY_CHARS);
    expect(searchKey(description).startsWith(rows[0]!.key)).toBe(true);
  });

  it('finds the show by words of the kept part, not by words past the cut', async () => {
    const found = async (q: string) =>
      (await h.get('/v1/podcasts/search', { q })).json().data.map((p: { id: string }) => p.id);
    expect(await found('zymurgy')).toEqual(['pod-wide']);
    expect(await found('tailword')).toEqual(['pod-plain']);
  });

  it('keeps an unfolded description of 100,000 characters whole', async () => {
    const long = `${'word '.repeat(19_999)}last`;
    await h.ingest([podcastEvent({ id: 'pod-long', title: 'Long Show', description: long })]);
    const { rows } = await h.db.query<{ key: string }>(
      "select search_description as key from podcasts where id = 'pod-long'",
    );
    expect(rows[0]!.key).toBe(long);
  });
});
