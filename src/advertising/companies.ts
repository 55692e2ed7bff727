import { findCompany } from '../../projections/entities/knowledge.ts';
import { compact } from '../catalog/compact.ts';
import type { Queryable } from '../db/db.ts';

interface CompanyEntityRow {
  id: string;
  slug: string;
  name: string;
  description: string | null;
  image_url: string | null;
  company: {
    domain?: string;
    ticker?: string;
    description?: string;
    image_url?: string;
    image_mode?: string;
  } | null;
}

/**
 * The company a reference names, as the knowledge graph resolves it (id, domain or entity slug:
 * docs/knowledge-graph.md, Identifiers); else an id that ads name as their sponsor's company_id.
 * Null when nothing matches.
 */
export async function resolveCompanyId(db: Queryable, ref: string): Promise<string | null> {
  const company = await findCompany(db, ref);
  if (company) return company.id;
  const { rows } = await db.query<{ id: string }>(
    'select sponsor_company_id as id from ads where sponsor_company_id = $1::text and not is_network_promo limit 1',
    [ref],
  );
  return rows[0]?.id ?? null;
}

export type CompanyCompact = ReturnType<typeof toCompanyCompact>;

const toCompanyCompact = (row: CompanyEntityRow) =>
  compact({
    id: row.id,
    name: row.name,
    description: row.company?.description ?? row.description,
    domain: row.company?.domain,
    image_url: row.company?.image_url ?? row.image_url,
    image_mode: row.company?.image_mode ?? 'AUTOMATIC',
    slug: row.slug,
    ticker: row.company?.ticker,
  });

/** CompanyCompact of each known company id; ids with no company record are left out. */
export async function companyCompacts(db: Queryable, ids: Iterable<string | null | undefined>) {
  const wanted = [...new Set([...ids].filter((id): id is string => !!id))];
  if (wanted.length === 0) return new Map<string, CompanyCompact>();
  const { rows } = await db.query<CompanyEntityRow>(
    `select id, slug, name, description, image_url, company from entities
      where entity_type = 'COMPANY' and id = any($1::text[])`,
    [wanted],
  );
  return new Map(rows.map((row) => [row.id, toCompanyCompact(row)]));
}

/** A company's compact record, or a bare one (id, name) when only ads know it. */
export const companyOrBare = (companies: ReadonlyMap<string, CompanyCompact>, id: string, name: string) =>
  companies.get(id) ?? { id, name, image_mode: 'AUTOMATIC' };

export interface Contact {
  person: { id: string; name: string; slug: string; description?: string; image_url?: string };
  role: string;
  title?: string;
  contact_profile_url?: string;
}

const MARKETING = /market|brand|growth|partner|sponsor|advertis|media|communication/i;
const EXECUTIVE = /chief|ceo|cmo|founder|president|head|director|vp|vice/i;

/**
 * People whose current role (or, before roles are known, person.company) is at the company,
 * matched on its id, slug, name or domain; marketing roles first (docs/advertising.md).
 */
export async function contactsOf(db: Queryable, companyIds: readonly string[], perCompany = 5) {
  const result = new Map<string, Contact[]>();
  if (companyIds.length === 0) return result;
  const { rows } = await db.query<{
    company_id: string;
    id: string;
    name: string;
    slug: string;
    description: string | null;
    image_url: string | null;
    title: string | null;
    profile_url: string | null;
  }>(
    `with companies as (
       select id, array_remove(array[lower(id), lower(slug), lower(name), lower(company->>'domain')], null) as names
         from entities where entity_type = 'COMPANY' and id = any($1::text[])
     )
     select c.id as company_id, p.id, p.name, p.slug, p.description, p.image_url,
            coalesce(p.person->'current_role'->>'title', p.person->>'title') as title,
            coalesce(p.person->>'contact_profile_url', p.person->>'profile_url') as profile_url
       from companies c
       join entities p on p.entity_type = 'PERSON'
        and lower(coalesce(p.person->'current_role'->>'company', p.person->>'company')) = any(c.names)
      order by c.id, p.name, p.id`,
    [companyIds],
  );
  for (const row of rows) {
    const role = MARKETING.test(row.title ?? '')
      ? 'marketing'
      : EXECUTIVE.test(row.title ?? '')
        ? 'executive'
        : 'staff';
    const list = result.get(row.company_id) ?? [];
    list.push(
      compact({
        person: compact({
          id: row.id,
          name: row.name,
          slug: row.slug,
          description: row.description,
          image_url: row.image_url,
        }) as Contact['person'],
        role,
        title: row.title,
        contact_profile_url: row.profile_url,
      }) as Contact,
    );
    result.set(row.company_id, list);
  }
  const order = { marketing: 0, executive: 1, staff: 2 } as Record<string, number>;
  for (const [id, list] of result)
    result.set(id, list.sort((a, b) => order[a.role]! - order[b.role]!).slice(0, perCompany));
  return result;
}
