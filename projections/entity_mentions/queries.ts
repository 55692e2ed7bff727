import type { Queryable } from '../../src/db/db.ts';

/** Distinct episodes mentioning each entity (docs/knowledge-graph.md); entities with none are absent. */
export async function episodeMentionCounts(
  db: Queryable,
  entityIds: readonly string[],
): Promise<Map<string, number>> {
  if (entityIds.length === 0) return new Map();
  const { rows } = await db.query<{ entity_id: string; episodes: number }>(
    `select entity_id, count(*)::int as episodes from entity_mentions
      where entity_id = any($1::text[]) group by entity_id`,
    [entityIds],
  );
  return new Map(rows.map((row) => [row.entity_id, row.episodes]));
}
