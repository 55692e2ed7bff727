import { entitiesOfIds } from '../../projections/entities/queries.ts';
import type { Queryable } from '../db/db.ts';
import { type Entity, toEntity } from '../entities/view.ts';

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

/**
 * The entities that speakers name by `entity_id` or `person_id`, in one read, each as
 * `GET /v1/entities/{id}` shows it (docs/catalog.md, "Speakers' entities"); ids not known are left out.
 */
export async function speakerEntities(
  db: Queryable,
  ids: Iterable<string | null | undefined>,
): Promise<SpeakerEntities> {
  const rows = await entitiesOfIds(db, ids);
  return new Map([...rows].map(([id, row]) => [id, toEntity(row)]));
}

export type SpeakerEntities = ReadonlyMap<string, Entity>;
