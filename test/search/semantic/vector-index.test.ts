import { describe, expect, it } from 'vitest';
import { normalize } from '../../../src/search/semantic/provider.ts';
import { VectorIndex } from '../../../src/search/semantic/vector-index.ts';
import { prng } from '../../support/synthetic.ts';

const unit = (values: number[]) => normalize(Float32Array.from(values));

describe('the in-memory vector index', () => {
  it('ranks only the allowed episodes, however many better passages the others hold', () => {
    const index = new VectorIndex(2);
    for (let e = 0; e < 200; e++)
      index.replaceEpisode(`near-${e}`, [{ start: 0, lines: 5, vector: unit([1, 0.01 * e]) }]);
    index.replaceEpisode('far', [{ start: 5, lines: 3, vector: unit([0.2, 1]) }]);
    const query = unit([1, 0]);
    expect(index.search(query, 1, -1).map((h) => h.episodeId)).toEqual(['near-0']);
    expect(index.search(query, 1, -1, ['far'])).toEqual([
      { episodeId: 'far', start: 5, lines: 3, score: expect.closeTo(0.196, 3) },
    ]);
    expect(index.search(query, 10, 0.5, ['far'])).toEqual([]);
  });

  it('orders equal scores by episode and start, whatever order the passages arrived in', () => {
    const same = unit([1, 1]);
    const ranked = (ids: string[]) => {
      const index = new VectorIndex(2);
      for (const id of ids) index.replaceEpisode(id, [{ start: 0, lines: 5, vector: same }]);
      return index.search(unit([1, 0]), 10, -1).map((h) => h.episodeId);
    };
    expect(ranked(['c', 'a', 'b'])).toEqual(['a', 'b', 'c']);
    expect(ranked(['b', 'c', 'a'])).toEqual(['a', 'b', 'c']);
  });

  it("replaces an episode's passages and forgets an episode sent without any", () => {
    const index = new VectorIndex(2);
    index.replaceEpisode('a', [{ start: 0, lines: 5, vector: unit([1, 0]) }]);
    index.replaceEpisode('a', [{ start: 10, lines: 5, vector: unit([0, 1]) }]);
    expect(index.search(unit([0, 1]), 5, -1).map((h) => h.start)).toEqual([10]);
    index.replaceEpisode('a', []);
    expect(index.size).toBe(0);
    expect(index.search(unit([0, 1]), 5, -1)).toEqual([]);
  });

  it('past 50,000 passages, finds most of the exact top 10 through its lists', () => {
    const random = prng(3);
    const d = 48;
    const centers = Array.from({ length: 300 }, () => Array.from({ length: d }, () => random() - 0.5));
    const index = new VectorIndex(d);
    for (let e = 0; e < 600; e++)
      index.replaceEpisode(
        `ep-${e}`,
        Array.from({ length: 100 }, (_, p) => {
          const center = centers[Math.floor(random() * centers.length)]!;
          return { start: p * 5, lines: 5, vector: unit(center.map((c) => c + (random() - 0.5) * 0.3)) };
        }),
      );
    expect(index.size).toBe(60_000);
    let agree = 0;
    for (let q = 0; q < 20; q++) {
      const query = unit(centers[q]!.map((c) => c + (random() - 0.5) * 0.3));
      const exact = new Set(index.searchExact(query, 10).map((h) => `${h.episodeId}/${h.start}`));
      agree += index.search(query, 10, -1).filter((h) => exact.has(`${h.episodeId}/${h.start}`)).length;
    }
    expect(agree / 200).toBeGreaterThanOrEqual(0.8);
  }, 60_000);

  it('past 50,000 allowed passages, still ranks only the allowed ones when every better one is filtered out', () => {
    const random = prng(5);
    const d = 16;
    const query = unit(Array.from({ length: d }, (_, k) => (k === 0 ? 1 : 0)));
    // 100 episodes close to the query, filtered out; 520 allowed ones spread everywhere.
    const near = (k: number) => (k === 0 ? 1 : (random() - 0.5) * 0.2);
    const spread = () => random() - 0.5;
    const index = new VectorIndex(d);
    const vectors = new Map<string, Float32Array>();
    for (let e = 0; e < 620; e++) {
      const id = e < 100 ? `near-${e}` : `ep-${e}`;
      index.replaceEpisode(
        id,
        Array.from({ length: 100 }, (_, p) => {
          const vector = unit(Array.from({ length: d }, (_, k) => (e < 100 ? near(k) : spread())));
          vectors.set(`${id}/${p * 5}`, vector);
          return { start: p * 5, lines: 5, vector };
        }),
      );
    }
    const allowed = Array.from({ length: 520 }, (_, i) => `ep-${i + 100}`);
    const score = (v: Float32Array) => v.reduce((sum, x, k) => sum + x * query[k]!, 0);
    const exact = [...vectors]
      .filter(([key]) => key.startsWith('ep-'))
      .map(([key, v]) => ({ key, score: score(v) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, 10)
      .map((h) => h.key);
    const found = index.search(query, 10, -1, allowed).map((h) => `${h.episodeId}/${h.start}`);
    expect(found).toHaveLength(10);
    expect(found.every((key) => key.startsWith('ep-'))).toBe(true);
    expect(found.filter((key) => exact.includes(key)).length).toBeGreaterThanOrEqual(8);
  }, 60_000);
});
