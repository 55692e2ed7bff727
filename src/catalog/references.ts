import type { Queryable } from '../db/db.ts';

/**
 * The entity ids a reference names: an entity by id or slug (a person, a company or a topic), plus
 * the reference itself so ids that only producers know (speaker ids) still match.
 */
export async function entityIdsOf(db: Queryable, ref: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    'select id from entities where id = $1::text or slug = $1::text',
    [ref],
  );
  return [...new Set([ref, ...rows.map((row) => row.id)])];
}

export interface EntityReference {
  id: string;
  name: string;
  slug: string;
}

/** Entities by id, for the entity and person of speakers; ids not known are left out. */
export async function entityReferences(db: Queryable, ids: Iterable<string | undefined>) {
  const wanted = [...new Set([...ids].filter((id): id is string => !!id))];
  if (wanted.length === 0) return new Map<string, EntityReference>();
  const { rows } = await db.query<EntityReference>(
    'select id, name, slug from entities where id = any($1::text[])',
    [wanted],
  );
  return new Map(rows.map((row) => [row.id, row]));
}
