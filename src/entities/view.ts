import type { EntityRow } from '../../projections/entities/queries.ts';
import { str } from '../http/route-schemas.ts';

export const TYPE_NAMES = {
  PERSON: { name: 'Person', slug: 'person' },
  COMPANY: { name: 'Company', slug: 'company' },
  KNOWLEDGE_GRAPH_ENTITY: { name: 'Knowledge graph entity', slug: 'knowledge_graph_entity' },
} as const;

/**
 * The Knowledge-graph entity: the answer of `GET /v1/entities/{id}`, and the `entity` and `person`
 * of the catalog's speakers (docs/catalog.md, "Speakers' entities"): one view and one schema for all.
 */
export const entitySchema = {
  type: 'object',
  required: ['id', 'name', 'slug'],
  properties: {
    id: str,
    name: str,
    slug: str,
    description: str,
    image_url: str,
    wikipedia_url: str,
    entity_type: str,
    aliases: { type: 'array', items: str },
    company: { type: 'object', properties: { id: str, domain: str, ticker: str } },
    person: { type: 'object', properties: { id: str, company: str, image_url: str, title: str } },
    type: { type: 'object', properties: { name: str, slug: str } },
  },
} as const;

/** Drops nulls and empty objects, since optional fields are omitted when unknown. */
export function compact<T extends object>(value: T): T {
  return Object.fromEntries(
    Object.entries(value).filter(
      ([, v]) =>
        v !== null &&
        v !== undefined &&
        !(typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0),
    ),
  ) as T;
}

export function toEntity(row: EntityRow) {
  return compact({
    id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    image_url: row.image_url,
    wikipedia_url: row.wikipedia_url,
    entity_type: row.entity_type,
    aliases: row.aliases,
    company: row.company
      ? compact({ id: row.company.id ?? row.id, domain: row.company.domain, ticker: row.company.ticker })
      : null,
    person: row.person
      ? compact({
          id: row.person.id ?? row.id,
          company: row.person.company,
          image_url: row.person.image_url,
          title: row.person.title,
        })
      : null,
    type: TYPE_NAMES[row.entity_type],
  });
}

export type Entity = ReturnType<typeof toEntity>;
