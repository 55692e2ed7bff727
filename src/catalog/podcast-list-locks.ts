import type { Queryable } from '../db/db.ts';

/**
 * Takes, before a batch's first write, the locks that refreshing the list read model takes for
 * these shows (schemas/migrations/0223_podcast_list_locked_refresh.sql; per schema since
 * 0260_podcast_list_locks_per_schema.sql): a projection whose statements refresh more shows one
 * after another could otherwise deadlock with another that refreshes some of them
 * (docs/catalog.md, "The list read model").
 */
export async function lockPodcastList(tx: Queryable, podcastIds: readonly string[]) {
  await tx.query('select lock_podcast_list($1::text[])', [podcastIds]);
}
