import { podcastIdInRankings } from '../../projections/chart_captures/queries.ts';
import { resolvePodcastId } from '../../projections/podcasts/queries.ts';
import type { Queryable } from '../db/db.ts';

/**
 * A podcast `{id}` (its id, slug or Apple directory id) as the podcast's id; null when nothing
 * knows it. The catalog's podcasts read model answers first; a show known only from chart entries
 * (by its podcast id or Apple id) still resolves from the ranking data.
 */
export async function rankedPodcastId(db: Queryable, id: string): Promise<string | null> {
  return (await resolvePodcastId(db, id)) ?? (await podcastIdInRankings(db, id));
}
