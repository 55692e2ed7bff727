import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fold } from '../../projections/entities/projection.ts';
import {
  companyImage,
  findEntity,
  type SearchHit,
  searchEntities,
} from '../../projections/entities/queries.ts';
import { episodeMentionCounts } from '../../projections/entity_mentions/queries.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { pageOf, pageQuery } from '../http/pagination.ts';
import { problemResponses } from '../http/problem.ts';
import { str } from '../http/route-schemas.ts';
import { companyCompactSchema } from '../knowledge/company-compact.ts';
import { BUSY_NOTE, type SearchSlots, searchesInFlight } from '../search/in-flight.ts';
import { compact, entitySchema, TYPE_NAMES, toEntity } from './view.ts';

const searchResultSchema = {
  type: 'object',
  required: ['type', 'match_quality', 'id', 'slug', 'name'],
  properties: {
    type: { enum: ['person', 'company', 'knowledge_graph_entity'] },
    match_quality: { enum: ['exact', 'prefix', 'fuzzy'] },
    id: str,
    slug: str,
    name: str,
    mentions: {
      type: 'object',
      properties: { news_articles: { type: 'integer' }, podcast_episodes: { type: 'integer' } },
    },
    person: {
      type: 'object',
      properties: { id: str, name: str, description: str, image_url: str, slug: str },
    },
    company: { ...companyCompactSchema, required: [] },
    knowledge_graph_entity: entitySchema,
    social_links: {
      type: 'array',
      items: { type: 'object', properties: { platform: str, url: str, followers: { type: 'integer' } } },
    },
  },
} as const;

function toSearchResult(hit: SearchHit, podcastEpisodes: number) {
  const base = {
    type: TYPE_NAMES[hit.entity_type].slug,
    match_quality: hit.match_quality,
    id: hit.id,
    slug: hit.slug,
    name: hit.name,
    // earshot ingests no news: news_articles is always 0 (docs/knowledge-graph.md).
    mentions: { news_articles: 0, podcast_episodes: podcastEpisodes },
    // The entity's external links that have a URL; earshot knows no follower counts.
    social_links: hit.external_links.flatMap((link) =>
      link.url ? [{ platform: link.platform, url: link.url }] : [],
    ),
  };
  if (hit.entity_type === 'PERSON')
    return {
      ...base,
      person: compact({
        id: hit.id,
        name: hit.name,
        description: hit.description,
        image_url: hit.image_url,
        slug: hit.slug,
      }),
    };
  if (hit.entity_type === 'COMPANY')
    return {
      ...base,
      company: compact({
        id: hit.company?.id ?? hit.id,
        name: hit.name,
        description: hit.company?.description ?? hit.description,
        domain: hit.company?.domain,
        image_url: companyImage(hit.company, hit.image_url),
        image_mode: hit.company?.image_mode,
        slug: hit.slug,
        ticker: hit.company?.ticker,
      }),
    };
  return { ...base, knowledge_graph_entity: toEntity(hit) };
}

interface SearchQuery {
  q: string;
  type?: string;
  limit: number;
  cursor?: string;
}

/** Entity search and reads; a search runs in one of its caller's search slots (src/composition.ts). */
export const entityRoutes = (inSlot: SearchSlots = searchesInFlight()) =>
  async function routes(app: FastifyInstance) {
    app.get<{ Querystring: SearchQuery }>(
      '/v1/entities/search',
      {
        schema: {
          tags: ['entities'],
          summary: 'Search people, companies and topics; best match first',
          querystring: {
            type: 'object',
            required: ['q'],
            properties: {
              q: { type: 'string', minLength: 1, maxLength: 200 },
              type: { enum: ['person', 'company', 'knowledge_graph_entity'] },
              ...pageQuery,
            },
          },
          description: BUSY_NOTE,
          response: { 200: pageOf(searchResultSchema), ...problemResponses(400, 401, 429) },
        },
      },
      inSlot(async (request: FastifyRequest<{ Querystring: SearchQuery }>) => {
        const { q, type, limit, cursor } = request.query;
        if (!fold(q.replace(/^@/, '')))
          throw new BadRequestError('invalid_parameter', 'q must contain something to search for.', [
            { location: 'query.q', message: 'is blank', value: q },
          ]);
        let offset = 0;
        if (cursor) {
          const position = app.cursors.decode<{ q: string; t: string | null; o: number }>(cursor);
          if (position.q !== q || position.t !== (type ?? null))
            throw new BadRequestError('invalid_cursor', 'The cursor belongs to another search.', [
              { location: 'query.cursor', message: 'issued for a different q or type', value: cursor },
            ]);
          offset = position.o;
        }
        const hits = await searchEntities(app.db, {
          q,
          entityType: type?.toUpperCase(),
          limit: limit + 1,
          offset,
        });
        const hasMore = hits.length > limit;
        const shown = hits.slice(0, limit);
        const counts = await episodeMentionCounts(
          app.db,
          shown.map((hit) => hit.id),
        );
        const data = shown.map((hit) => toSearchResult(hit, counts.get(hit.id) ?? 0));
        return hasMore
          ? { data, has_more: true, cursor: app.cursors.encode({ q, t: type ?? null, o: offset + limit }) }
          : { data, has_more: false };
      }),
    );

    app.get<{ Params: { id: string } }>(
      '/v1/entities/:id',
      {
        schema: {
          tags: ['entities'],
          summary: 'One entity by id or slug',
          params: {
            type: 'object',
            required: ['id'],
            properties: { id: { type: 'string', minLength: 1, maxLength: 200 } },
          },
          response: { 200: entitySchema, ...problemResponses(401, 404) },
        },
      },
      async (request) => {
        const { id } = request.params;
        const row = await findEntity(app.db, id);
        if (!row) throw new NotFoundError('entity_not_found', `No entity ${id}.`);
        return toEntity(row);
      },
    );
  };
