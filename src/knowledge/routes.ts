import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  findCompany,
  findPerson,
  type KnowledgeRow,
  type ListPosition,
  listCompanies,
  listPeople,
} from '../../projections/entities/knowledge.ts';
import { fold } from '../../projections/entities/projection.ts';
import { companyImage } from '../../projections/entities/queries.ts';
import { compact } from '../entities/view.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { pageOf, pageQuery } from '../http/pagination.ts';
import { problemResponses } from '../http/problem.ts';
import { BUSY_NOTE, type SearchSlots, searchesInFlight } from '../search/in-flight.ts';

/** Comma lists of /v1/companies hold at most this many values each. */
export const MAX_LIST = 100;

const str = { type: 'string' } as const;
const roleSchema = {
  type: 'object',
  properties: { company: str, title: str, started_at: str, ended_at: str },
} as const;
const linksSchema = {
  type: 'array',
  items: { type: 'object', required: ['platform'], properties: { platform: str, identifier: str, url: str } },
} as const;
const quality = { enum: ['exact', 'prefix', 'fuzzy'] } as const;

const personSchema = {
  type: 'object',
  required: ['id', 'name', 'slug'],
  properties: {
    id: str,
    name: str,
    slug: str,
    description: str,
    image_url: str,
    wikipedia_url: str,
    aliases: { type: 'array', items: str },
    title: str,
    company: str,
    current_role: roleSchema,
    roles: { type: 'array', items: roleSchema },
    external_links: linksSchema,
    match_quality: quality,
  },
} as const;

const companySchema = {
  type: 'object',
  required: ['id', 'name', 'slug', 'entity_id'],
  properties: {
    id: str,
    name: str,
    slug: str,
    entity_id: str,
    description: str,
    domain: str,
    image_url: str,
    image_mode: { enum: ['AUTOMATIC', 'CUSTOM', 'NONE'] },
    ticker: str,
    cik: str,
    qid: str,
    wikipedia_url: str,
    aliases: { type: 'array', items: str },
    external_links: linksSchema,
    match_quality: quality,
  },
} as const;

const nonEmpty = <T>(list: T[] | undefined) => (list && list.length > 0 ? list : null);

export function toPerson(row: KnowledgeRow) {
  const person = row.person ?? {};
  return compact({
    id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    image_url: row.image_url ?? person.image_url,
    wikipedia_url: row.wikipedia_url,
    aliases: nonEmpty(row.aliases),
    title: person.title ?? person.current_role?.title,
    company: person.company ?? person.current_role?.company,
    current_role: person.current_role ? compact({ ...person.current_role }) : null,
    roles: nonEmpty(person.roles?.map((role) => compact({ ...role }))),
    external_links: nonEmpty(row.external_links),
    match_quality: row.match_quality,
  });
}

export function toCompany(row: KnowledgeRow) {
  const company = row.company ?? {};
  return compact({
    id: company.id ?? row.id,
    name: row.name,
    slug: row.slug,
    entity_id: row.id,
    description: company.description ?? row.description,
    domain: company.domain,
    image_url: companyImage(row.company, row.image_url),
    image_mode: company.image_mode,
    ticker: company.ticker,
    cik: company.cik,
    qid: company.qid,
    wikipedia_url: row.wikipedia_url,
    aliases: nonEmpty(row.aliases),
    external_links: nonEmpty(row.external_links),
    match_quality: row.match_quality,
  });
}

const qParam = { type: 'string', minLength: 1, maxLength: 200 } as const;
const listParam = { type: 'string', minLength: 1, maxLength: 30_000 } as const;
const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, maxLength: 253 } },
} as const;

/** A folded q, refused when nothing is left to search for. */
function foldedQ(q: string | undefined): string | null {
  if (q === undefined) return null;
  const folded = fold(q.replace(/^@/, ''));
  if (!folded)
    throw new BadRequestError('invalid_parameter', 'q must contain something to search for.', [
      { location: 'query.q', message: 'is blank', value: q },
    ]);
  return folded;
}

/** A comma list of at most MAX_LIST values; blanks between commas are ignored. */
function commaList(name: string, value: string | undefined): string[] | null {
  if (value === undefined) return null;
  const items = [...new Set(value.split(',').map((item) => item.trim()))].filter(Boolean);
  if (items.length === 0)
    throw new BadRequestError('invalid_parameter', `${name} holds no value.`, [
      { location: `query.${name}`, message: 'is blank', value },
    ]);
  if (items.length > MAX_LIST)
    throw new BadRequestError('invalid_parameter', `${name} takes at most ${MAX_LIST} values.`, [
      {
        location: `query.${name}`,
        message: `has ${items.length} values, at most ${MAX_LIST} allowed`,
        value,
      },
    ]);
  return items;
}

interface PeopleQuery {
  q?: string;
  company_id?: string;
  limit: number;
  cursor?: string;
}

interface CompaniesQuery {
  q?: string;
  ticker?: string;
  domain?: string;
  cik?: string;
  qid?: string;
  entity_id?: string;
  limit: number;
  cursor?: string;
}

const withQ = (request: { query: { q?: string } }) => request.query.q !== undefined;

/** People and companies; a list with `q` runs in one of its caller's search slots (src/composition.ts). */
export const knowledgeRoutes = (inSlot: SearchSlots = searchesInFlight()) =>
  async function routes(app: FastifyInstance) {
    /**
     * Cursors bound to the filters they were issued for, as entity search's. A list without `q` is
     * in name order, so its cursor also holds the last row's name and id (`k`), and the next page
     * starts there instead of skipping `o` rows (docs/knowledge-graph.md, "Deep pages").
     */
    const positionOf = (cursor: string | undefined, filters: { q: string | null }) => {
      if (cursor === undefined) return { page: { offset: 0 }, skipped: 0 };
      const position = app.cursors.decode<{ f: unknown; o: number; k?: [string, string] }>(cursor);
      if (JSON.stringify(position.f) !== JSON.stringify(filters))
        throw new BadRequestError('invalid_cursor', 'The cursor belongs to another request.', [
          { location: 'query.cursor', message: 'issued for different parameters', value: cursor },
        ]);
      const page: ListPosition =
        filters.q === null && position.k
          ? { offset: 0, after: { name: position.k[0], id: position.k[1] } }
          : { offset: position.o };
      // o stays the rows before the page, for a process that reads offsets only (a rolling deploy)
      return { page, skipped: position.o };
    };
    const pageFrom = <T>(
      rows: KnowledgeRow[],
      toItem: (row: KnowledgeRow) => T,
      limit: number,
      skipped: number,
      filters: { q: string | null },
    ) => {
      if (rows.length <= limit) return { data: rows.map(toItem), has_more: false };
      const shown = rows.slice(0, limit);
      const last = shown.at(-1)!;
      return {
        data: shown.map(toItem),
        has_more: true,
        cursor: app.cursors.encode({
          f: filters,
          o: skipped + limit,
          ...(filters.q === null ? { k: [last.name, last.id] } : {}),
        }),
      };
    };

    app.get<{ Querystring: PeopleQuery }>(
      '/v1/people',
      {
        schema: {
          tags: ['knowledge graph'],
          summary: 'People, best name match first (by name without q)',
          querystring: {
            type: 'object',
            properties: { q: qParam, company_id: idParams.properties.id, ...pageQuery },
          },
          description: `With q, a search: ${BUSY_NOTE}`,
          response: { 200: pageOf(personSchema), ...problemResponses(400, 401, 404, 429) },
        },
      },
      inSlot(async (request: FastifyRequest<{ Querystring: PeopleQuery }>) => {
        const { q, company_id: companyId, limit, cursor } = request.query;
        const folded = foldedQ(q);
        let companyNames: string[] | null = null;
        if (companyId !== undefined) {
          const company = await findCompany(app.db, companyId);
          if (!company) throw new NotFoundError('company_not_found', `No company ${companyId}.`);
          companyNames = namesOf(company);
        }
        const filters = { q: folded, c: companyNames };
        const { page, skipped } = positionOf(cursor, filters);
        const rows = await listPeople(app.db, { q: folded, companyNames, limit: limit + 1, ...page });
        return pageFrom(rows, toPerson, limit, skipped, filters);
      }, withQ),
    );

    app.get<{ Params: { id: string } }>(
      '/v1/people/:id',
      {
        schema: {
          tags: ['knowledge graph'],
          summary: 'One person by id or slug',
          params: idParams,
          response: { 200: personSchema, ...problemResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const row = await findPerson(app.db, request.params.id);
        if (!row) throw new NotFoundError('person_not_found', `No person ${request.params.id}.`);
        return toPerson(row);
      },
    );

    app.get<{ Querystring: CompaniesQuery }>(
      '/v1/companies',
      {
        schema: {
          tags: ['knowledge graph'],
          summary: 'Companies matching every filter given, best name match first (by name without q)',
          querystring: {
            type: 'object',
            properties: {
              q: qParam,
              ticker: listParam,
              domain: listParam,
              cik: listParam,
              qid: listParam,
              entity_id: listParam,
              ...pageQuery,
            },
          },
          description: `With q, a search: ${BUSY_NOTE}`,
          response: { 200: pageOf(companySchema), ...problemResponses(400, 401, 429) },
        },
      },
      inSlot(async (request: FastifyRequest<{ Querystring: CompaniesQuery }>) => {
        const { q, limit, cursor } = request.query;
        const filters = {
          q: foldedQ(q),
          tickers: commaList('ticker', request.query.ticker),
          domains: commaList('domain', request.query.domain),
          ciks: commaList('cik', request.query.cik),
          qids: commaList('qid', request.query.qid),
          entityIds: commaList('entity_id', request.query.entity_id),
        };
        const { page, skipped } = positionOf(cursor, filters);
        const rows = await listCompanies(app.db, { ...filters, limit: limit + 1, ...page });
        return pageFrom(rows, toCompany, limit, skipped, filters);
      }, withQ),
    );

    app.get<{ Params: { id: string } }>(
      '/v1/companies/:id',
      {
        schema: {
          tags: ['knowledge graph'],
          summary: 'One company by id, domain or entity slug',
          params: idParams,
          response: { 200: companySchema, ...problemResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const row = await findCompany(app.db, request.params.id);
        if (!row) throw new NotFoundError('company_not_found', `No company ${request.params.id}.`);
        return toCompany(row);
      },
    );
  };

/** What a person's role may name the company by: its name, aliases, ids, slug and domain, lower case. */
function namesOf(company: KnowledgeRow): string[] {
  const names = [company.name, ...company.aliases, company.id, company.slug];
  if (company.company?.id) names.push(company.company.id);
  if (company.company?.domain) names.push(company.company.domain);
  return [...new Set(names.map((name) => name.toLowerCase()))];
}
