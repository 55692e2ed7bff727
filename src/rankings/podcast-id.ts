import { podcastIdInRankings } from '../../projections/chart_captures/queries.ts';
import type { Queryable } from '../db/db.ts';

/**
 * A podcast `{id}` (its id, slug or Apple directory id) as the podcast's id; null when nothing
 * knows it. Answered from the ranking data (entries' podcast ids and Apple ids) and the episodes
 * read model (podcast ids and slugs of ingested episodes).
 *
 * The one place the rankings routes resolve a podcast: point it at the podcasts read model's
 * resolver once that exists.
 */
export async function resolvePodcastId(db: Queryable, id: string): Promise<string | null> {
  const ranked = await podcastIdInRankings(db, id);
  if (ranked) return ranked;
  const { rows } = await db.query<{ podcast_id: string }>(
    `(select podcast_id from episodes where podcast_id = $1::text limit 1)
     union all
     (select podcast_id from episodes where payload->'podcast'->>'slug' = $1::text
       order by occurred_at desc limit 1)
     limit 1`,
    [id],
  );
  return rows[0]?.podcast_id ?? null;
}
