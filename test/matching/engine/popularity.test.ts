import { describe, expect, it } from 'vitest';
import { meetsAnySourcePopularity, popularityBadge } from '../../../src/matching/engine/popularity.ts';

describe('source popularity', () => {
  it('gives the badge of the highest tier reached', () => {
    expect(popularityBadge(1)).toBe('Top Podcast');
    expect(popularityBadge(0.99)).toBe('Top Podcast');
    expect(popularityBadge(0.989)).toBe('Very Popular');
    expect(popularityBadge(0.95)).toBe('Very Popular');
    expect(popularityBadge(0.8)).toBe('Popular');
    expect(popularityBadge(0.79)).toBeUndefined();
    expect(popularityBadge(undefined)).toBeUndefined();
  });

  it('accepts a podcast that reaches any listed tier', () => {
    expect(meetsAnySourcePopularity(0.96, ['TOP_PODCAST', 'VERY_POPULAR'])).toBe(true);
    expect(meetsAnySourcePopularity(0.96, ['TOP_PODCAST'])).toBe(false);
    expect(meetsAnySourcePopularity(0.85, ['POPULAR'])).toBe(true);
  });

  it('accepts everything without tiers and nothing of unknown popularity with tiers', () => {
    expect(meetsAnySourcePopularity(undefined, [])).toBe(true);
    expect(meetsAnySourcePopularity(undefined, ['POPULAR'])).toBe(false);
    expect(meetsAnySourcePopularity(Number.NaN, ['POPULAR'])).toBe(false);
  });
});
