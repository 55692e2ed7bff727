import type { SourcePopularity } from '../../alerts/values.ts';

/** Podcast popularity tiers (docs/matching.md): popularity is the global percentile in [0, 1]. */

export type PopularityBadge = 'Top Podcast' | 'Very Popular' | 'Popular';

const MINIMUM: Readonly<Record<SourcePopularity, number>> = {
  TOP_PODCAST: 0.99,
  VERY_POPULAR: 0.95,
  POPULAR: 0.8,
};

export function meetsSourcePopularity(
  popularity: number | null | undefined,
  tier: SourcePopularity,
): boolean {
  return typeof popularity === 'number' && Number.isFinite(popularity) && popularity >= MINIMUM[tier];
}

/** True when the popularity reaches any of the listed tiers; an empty list accepts everything. */
export function meetsAnySourcePopularity(
  popularity: number | null | undefined,
  tiers: readonly SourcePopularity[],
): boolean {
  if (tiers.length === 0) return true;
  return tiers.some((tier) => meetsSourcePopularity(popularity, tier));
}

/** `podcast_popularity_badge` of the match episode block; undefined below 0.80 or when unknown. */
export function popularityBadge(popularity: number | null | undefined): PopularityBadge | undefined {
  if (meetsSourcePopularity(popularity, 'TOP_PODCAST')) return 'Top Podcast';
  if (meetsSourcePopularity(popularity, 'VERY_POPULAR')) return 'Very Popular';
  if (meetsSourcePopularity(popularity, 'POPULAR')) return 'Popular';
  return undefined;
}

/** The lowest popularity that passes any of the tiers (for filtering stored matches in SQL). */
export function lowestPopularityOf(tiers: readonly SourcePopularity[]): number | undefined {
  return tiers.length === 0 ? undefined : Math.min(...tiers.map((tier) => MINIMUM[tier]));
}
