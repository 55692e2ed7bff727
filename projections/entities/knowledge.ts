import type { Queryable } from '../../src/db/db.ts';
import type { EntityUpserted } from '../../src/ingestion/events.ts';
import { domainOf, type EntityRow, type MatchQuality } from './queries.ts';

/** People and companies are the PERSON and COMPANY rows of the entities read model (docs/knowledge-graph.md). */
type Wire = EntityUpserted['entity'];
export interface KnowledgeRow extends Omit<EntityRow, 'company' | 'person'> {
  company: NonNullable<Wire['company']> | null;
  person: (NonNullable<Wire['person']> & { id?: string }) | null;
  external_links: NonNullable<Wire['external_links']>;
  match_quality?: MatchQuality;
}

const COLUMNS = `e.id, e.slug, e.name, e.entity_type, e.aliases, e.description, e.image_url, e.wikipedia_url,
  e.company, e.person, e.external_links`;

/**
 * Matches q like entity search: trigram-similar to the names, or inside them (search_text holds
 * every folded name and alias, so a prefix of any is inside it); both are answered by the trigram
 * index. Ranked exact (a name or alias), prefix, then fuzzy. $1 is the folded q or null, $2 the
 * same escaped for LIKE.
 */
const Q_MATCHES = `($1::text is null or e.search_text % $1::text or e.search_text like '%' || $2::text || '%')`;
const Q_RANK = `case when $1::text is null then 0
  when exists (select 1 from entity_names n where n.entity_id = e.id and n.name = $1::text) then 0
  when exists (select 1 from entity_names n where n.entity_id = e.id and n.name like $2::text || '%') then 1
  else 2 end`;
const Q_ORDER = `rank, case when $1::text is null then 0 else similarity(e.search_text, $1::text) end desc, e.name, e.id`;

const escapeLike = (q: string | null) => q?.replace(/[\\%_]/g, (c) => `\\${c}`) ?? null;
const QUALITY: MatchQuality[] = ['exact', 'prefix', 'fuzzy'];
const withQuality = (q: string | null) => (row: KnowledgeRow & { rank: number }) => {
  const { rank, ...rest } = row;
  return q === null ? rest : { ...rest, match_quality: QUALITY[rank]! };
};

/**
 * Where a page starts: after `offset` rows, or (a list without q, in name order) after the row of
 * `after`, read from there through the index entities_type_name (docs/knowledge-graph.md, "Deep pages").
 */
export interface ListPosition {
  offset: number;
  after?: { name: string; id: string };
}

/** SQL: rows after the position's name and id ($a, $b), when it has them. */
const AFTER = (a: number, b: number) =>
  `($${a}::text is null or (e.name, e.id) > ($${a}::text, $${b}::text))`;

export interface PeopleFilter extends ListPosition {
  /** Folded q, or null. */
  q: string | null;
  /** The company people must hold (or have held) a role at: the names it goes by, lower case. */
  companyNames: string[] | null;
  limit: number;
}

/**
 * People, best q match first (by name without q); a role's company matches any of companyNames:
 * person_companies (migration 0264) lists a person's companies, and its index finds them.
 */
export async function listPeople(db: Queryable, filter: PeopleFilter): Promise<KnowledgeRow[]> {
  const { rows } = await db.query<KnowledgeRow & { rank: number }>(
    `select ${COLUMNS}, ${Q_RANK} as rank
       from entities e
      where e.entity_type = 'PERSON' and ${Q_MATCHES}
        and ($3::text[] is null or person_companies(e.person) && $3::text[])
        and ${AFTER(6, 7)}
      order by ${Q_ORDER}
      limit $4::int offset $5::int`,
    [
      filter.q,
      escapeLike(filter.q),
      filter.companyNames,
      filter.limit,
      filter.offset,
      filter.after?.name ?? null,
      filter.after?.id ?? null,
    ],
  );
  return rows.map(withQuality(filter.q));
}

export interface CompanyFilter extends ListPosition {
  q: string | null;
  tickers: string[] | null;
  domains: string[] | null;
  ciks: string[] | null;
  qids: string[] | null;
  entityIds: string[] | null;
  limit: number;
}

/** Companies matching every filter given (any value of each list), best q match first, else by name. */
export async function listCompanies(db: Queryable, filter: CompanyFilter): Promise<KnowledgeRow[]> {
  const { rows } = await db.query<KnowledgeRow & { rank: number }>(
    `select ${COLUMNS}, ${Q_RANK} as rank
       from entities e
      where e.entity_type = 'COMPANY' and ${Q_MATCHES}
        and ($3::text[] is null or lower(e.company->>'ticker') = any($3::text[]))
        and ($4::text[] is null or lower(e.company->>'domain') = any($4::text[]))
        and ($5::text[] is null or ltrim(e.company->>'cik', '0') = any($5::text[]))
        and ($6::text[] is null or e.company->>'qid' = any($6::text[]))
        and ($7::text[] is null or e.id = any($7::text[]) or e.slug = any($7::text[]))
        and ${AFTER(10, 11)}
      order by ${Q_ORDER}
      limit $8::int offset $9::int`,
    [
      filter.q,
      escapeLike(filter.q),
      filter.tickers?.map((t) => t.toLowerCase()) ?? null,
      filter.domains?.map(domainOf) ?? null,
      filter.ciks?.map((c) => c.replace(/^0+/, '')) ?? null,
      filter.qids?.map((q) => q.toUpperCase()) ?? null,
      filter.entityIds,
      filter.limit,
      filter.offset,
      filter.after?.name ?? null,
      filter.after?.id ?? null,
    ],
  );
  return rows.map(withQuality(filter.q));
}

/**
 * The company a company reference names, wherever a company is addressed: its entity id, its
 * company.id, its domain (domainOf; the newest holder), or its entity slug (the first claimant), in
 * that order (docs/knowledge-graph.md, Identifiers).
 */
export async function findCompany(db: Queryable, id: string): Promise<KnowledgeRow | null> {
  const { rows } = await db.query<KnowledgeRow>(
    `select ${COLUMNS} from entities e where e.id = $1::text and e.entity_type = 'COMPANY'
     union all
     (select ${COLUMNS} from entities e where e.company->>'id' = $1::text and e.entity_type = 'COMPANY' limit 1)
     union all
     (select ${COLUMNS} from entities e
       where lower(e.company->>'domain') = $2::text and $2::text <> '' and e.entity_type = 'COMPANY'
       order by e.occurred_at desc limit 1)
     union all
     (select ${COLUMNS} from entities e where e.slug = $1::text and e.entity_type = 'COMPANY'
       order by e.slug_claim limit 1)
     limit 1`,
    [id, domainOf(id)],
  );
  return rows[0] ?? null;
}

/** A person by id or slug. */
export async function findPerson(db: Queryable, id: string): Promise<KnowledgeRow | null> {
  const { rows } = await db.query<KnowledgeRow>(
    `select ${COLUMNS} from entities e where e.id = $1::text and e.entity_type = 'PERSON'
     union all
     (select ${COLUMNS} from entities e where e.slug = $1::text and e.entity_type = 'PERSON'
       order by e.slug_claim limit 1)
     limit 1`,
    [id],
  );
  return rows[0] ?? null;
}
