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
  company: { id?: string; domain?: string; ticker?: string } | null;
  person: { id?: string; title?: string; company?: string; image_url?: string } | null;
}

const COLUMNS =
  'id, slug, name, entity_type, aliases, description, image_url, wikipedia_url, company, person';

/** By id, else by slug (the newest entity holding it). */
export async function findEntity(db: Queryable, idOrSlug: string): Promise<EntityRow | null> {
  const { rows } = await db.query<EntityRow>(
    `select ${COLUMNS} from entities where id = $1::text
     union all
     (select ${COLUMNS} from entities where slug = $1::text order by occurred_at desc limit 1)
     limit 1`,
    [idOrSlug],
  );
  return rows[0] ?? null;
}

export async function findEntitiesByIds(db: Queryable, ids: readonly string[]): Promise<EntityRow[]> {
  const { rows } = await db.query<EntityRow>(`select ${COLUMNS} from entities where id = any($1::text[])`, [
    ids,
  ]);
  return rows;
}

export type MatchQuality = 'exact' | 'prefix' | 'fuzzy';
export interface SearchHit extends EntityRow {
  match_quality: MatchQuality;
}

/**
 * Best match first: exact (name, alias, slug, ticker or domain), then prefix of a name or alias,
 * then fuzzy (trigram similarity, so typos and partial names still find the entity).
 */
export async function searchEntities(
  db: Queryable,
  input: { q: string; entityType?: string; limit: number; offset: number },
): Promise<SearchHit[]> {
  const q = fold(input.q.replace(/^@/, ''));
  const { rows } = await db.query<EntityRow & { rank: number }>(
    `select ${COLUMNS}, rank from (
       select e.*,
              case
                when $1::text = any(e.search_names) or e.slug = $1::text
                  or lower(e.company->>'ticker') = $1::text or lower(e.company->>'domain') = $1::text then 0
                when exists (select 1 from unnest(e.search_names) n where n like $2::text || '%') then 1
                else 2
              end as rank,
              similarity(e.search_text, $1::text) as score
         from entities e
        where ($3::text is null or e.entity_type = $3::text)
          and ($1::text = any(e.search_names) or e.slug = $1::text
               or lower(e.company->>'ticker') = $1::text or lower(e.company->>'domain') = $1::text
               or exists (select 1 from unnest(e.search_names) n where n like $2::text || '%')
               or e.search_text % $1::text or $1::text <% e.search_text)
     ) ranked
     order by rank, score desc, name, id
     limit $4::int offset $5::int`,
    [q, q.replace(/[\\%_]/g, (c) => `\\${c}`), input.entityType ?? null, input.limit, input.offset],
  );
  const quality: MatchQuality[] = ['exact', 'prefix', 'fuzzy'];
  return rows.map(({ rank, ...row }) => ({ ...row, match_quality: quality[rank]! }));
}
