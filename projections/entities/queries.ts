import type { Queryable } from '../../src/db/db.ts';
import { fold } from './projection.ts';

export interface EntityRow {
  id: string;
  slug: string;
  name: string;
  entity_type: 'PERSON' | 'COMPANY' | 'KNOWLEDGE_GRAPH_ENTITY';
  aliases: string[];
  description: string | null;
  image_url: string | null;
  wikipedia_url: string | null;
  company: {
    id?: string;
    domain?: string;
    ticker?: string;
    description?: string;
    image_url?: string;
    image_mode?: 'AUTOMATIC' | 'CUSTOM' | 'NONE';
  } | null;
  person: { id?: string; title?: string; company?: string; image_url?: string } | null;
}

/** A company's logo: its own, else the entity's image unless image_mode NONE forbids a fallback. */
export const companyImage = (company: EntityRow['company'], entityImage: string | null | undefined) =>
  company?.image_url ?? (company?.image_mode === 'NONE' ? undefined : (entityImage ?? undefined));

const COLUMNS =
  'id, slug, name, entity_type, aliases, description, image_url, wikipedia_url, company, person';

/** The domain form of a company reference, as stored domains are matched: lower case, without scheme, www. or path. */
export const domainOf = (text: string) =>
  text
    .trim()
    .toLowerCase()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
    .replace(/^www\./, '')
    .replace(/[/?#].*$/, '');

/** The entity named by the first id `idQuery` (SQL selecting `id`, with `params`) gives; null when none. */
export async function findEntityOfId(
  db: Queryable,
  idQuery: string,
  params: readonly unknown[],
): Promise<EntityRow | null> {
  const { rows } = await db.query<EntityRow>(
    `select ${COLUMNS} from entities where id = (select q.id from (${idQuery}) q limit 1)`,
    params,
  );
  return rows[0] ?? null;
}

/** The entities of these ids, in one read; ids not known are left out. */
export async function entitiesOfIds(
  db: Queryable,
  ids: Iterable<string | null | undefined>,
): Promise<Map<string, EntityRow>> {
  const wanted = [...new Set([...ids].filter((id): id is string => !!id))];
  if (wanted.length === 0) return new Map();
  const { rows } = await db.query<EntityRow>(`select ${COLUMNS} from entities where id = any($1::text[])`, [
    wanted,
  ]);
  return new Map(rows.map((row) => [row.id, row]));
}

/**
 * SQL: a JSON array of the EntityRows of the ids `ids` (SQL selecting one text column) names, or
 * null when none is known; for a statement that reads entities with other rows.
 */
export const entityRowsJson = (ids: string) =>
  `(select json_agg(r) from (select ${COLUMNS} from entities where id in (${ids})) r)`;

/** By id, else by slug (the entity that claimed it first: docs/matching.md, Entities and slugs), else a company by its domain. */
export async function findEntity(db: Queryable, idOrSlug: string): Promise<EntityRow | null> {
  const { rows } = await db.query<EntityRow>(
    `select ${COLUMNS} from entities where id = $1::text
     union all
     (select ${COLUMNS} from entities where slug = $1::text order by slug_claim limit 1)
     union all
     (select ${COLUMNS} from entities where lower(company->>'domain') = $2::text and $2::text <> ''
       order by occurred_at desc limit 1)
     limit 1`,
    [idOrSlug, domainOf(idOrSlug)],
  );
  return rows[0] ?? null;
}

export type MatchQuality = 'exact' | 'prefix' | 'fuzzy';
export interface SearchHit extends EntityRow {
  match_quality: MatchQuality;
  /** As sent on entity.upserted: `[]` when none. */
  external_links: { platform: string; identifier?: string; url?: string }[];
}

/**
 * Best match first: exact (name, alias, slug, ticker or domain), then prefix of a name or alias,
 * then fuzzy (trigram similarity, so typos and partial names still find the entity).
 *
 * Each kind of match is its own branch answered from an index, keeping only its best offset+limit
 * rows in the final order; an entity found by several branches keeps its best rank. The final page
 * is always among those rows: every entity ahead of it in its branch is also ahead of it overall.
 */
export async function searchEntities(
  db: Queryable,
  input: { q: string; entityType?: string; limit: number; offset: number },
): Promise<SearchHit[]> {
  const q = fold(input.q.replace(/^@/, ''));
  const branch = (rank: number, from: string, where: string) =>
    `(select e.id, ${rank} as rank from ${from}
       where ${where} and ($3::text is null or e.entity_type = $3::text)
       order by similarity(e.search_text, $1::text) desc, e.name, e.id
       limit $6::int)`;
  const { rows } = await db.query<Omit<SearchHit, 'match_quality'> & { rank: number }>(
    `with hits as (
       ${branch(0, 'entity_names n join entities e on e.id = n.entity_id', 'n.name = $1::text')}
       union all ${branch(0, 'entities e', 'e.slug = $1::text')}
       union all ${branch(0, 'entities e', "lower(e.company->>'ticker') = $1::text")}
       union all ${branch(0, 'entities e', "lower(e.company->>'domain') = $1::text")}
       union all ${branch(
         1,
         'entities e',
         "e.id in (select n.entity_id from entity_names n where n.name like $2::text || '%')",
       )}
       union all select id, 2 from entity_fuzzy_matches($1::text, $3::text, $6::int) as f(id)
     )
     select ${COLUMNS}, e.external_links, h.rank
       from (select id, min(rank) as rank from hits group by id) h join entities e using (id)
      order by h.rank, similarity(e.search_text, $1::text) desc, e.name, e.id
      limit $4::int offset $5::int`,
    [
      q,
      q.replace(/[\\%_]/g, (c) => `\\${c}`),
      input.entityType ?? null,
      input.limit,
      input.offset,
      input.offset + input.limit,
    ],
  );
  const quality: MatchQuality[] = ['exact', 'prefix', 'fuzzy'];
  return rows.map(({ rank, ...row }) => ({ ...row, match_quality: quality[rank]! }));
}
