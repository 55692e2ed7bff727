import type { FastifyInstance } from 'fastify';
import { PASSAGE_LINES } from '../../projections/search-passages/passages.ts';
import {
  anyEpisode,
  countByBucket,
  type EpisodeScope,
  entityLines,
  type Interval,
  type KeywordFilter,
  mentionEpisodes,
  searchEpisodes,
} from '../../projections/search-passages/queries.ts';
import { isEpisodePosition } from '../catalog/pages.ts';
import { offsetCursor } from '../catalog/params.ts';
import type { Queryable } from '../db/db.ts';
import { ValidationError } from '../errors.ts';
import { problemResponses } from '../http/problem.ts';
import { WINDOW_CONTEXT_LINES } from '../matching/engine/windows.ts';
import { type Diagnostics, diagnose } from './diagnostics.ts';
import { activeFilters, type FilterQuery, type Filters, resolveFilters } from './filters.ts';
import { BUSY_NOTE, type SearchSlots } from './in-flight.ts';
import { around, entityMentions, mentionItem, nameDetector, searchItem } from './items.ts';
import { loadEpisodes } from './parts.ts';
import { MENTION_ENTITY_PARAMETERS, type ResolvedEntity } from './references.ts';
import {
  episodeTimeseriesQuerySchema,
  mentionsPageSchema,
  mentionsQuerySchema,
  mentionsTimeseriesQuerySchema,
  searchPageSchema,
  searchQuerySchema,
  timeseriesSchema,
} from './schemas.ts';
import { assertSemanticTimeseries, semanticPage, semanticTimeseries } from './semantic/answers.ts';
import type { EmbeddingProvider } from './semantic/provider.ts';
import { type Semantic, semanticOf } from './semantic/semantic.ts';
import { boundedReads } from './statement-timeout.ts';
import { bucketsOf, timeseriesOf } from './timeseries.ts';

interface SearchQuery extends FilterQuery {
  sort: 'relevance' | 'recency';
  limit: number;
  cursor?: string;
}
interface TimeseriesQuery extends FilterQuery {
  interval: Interval;
}
interface MentionsQuery extends FilterQuery {
  context_lines: number;
  limit: number;
  cursor?: string;
}

const YEAR = 365 * 86_400_000;
/** Matching passages read per search item (docs/search.md, "Result items"): past them, truncated. */
const PASSAGES_PER_ITEM = 40;
const tags = ['search'];
const semanticNote =
  ' semantic_search ranks passages by meaning; with keyword_search too, only episodes matching both, by reciprocal rank fusion (docs/semantic-search.md).' +
  ' 503 semantic_search_loading (with Retry-After) while the server loads its index after a start.';
const semanticSeriesNote =
  ' With semantic_search: since is required, the range is at most 731 days, and keyword_search is not allowed.';

/** 422 entity_required: mention endpoints are about one entity. */
function requireEntity(filters: Filters) {
  if (filters.entity !== undefined) return filters.entity;
  throw new ValidationError(
    'entity_required',
    `Name the entity: one of ${MENTION_ENTITY_PARAMETERS.join(', ')}.`,
    [{ location: 'query.entity_id', message: 'one entity parameter is required' }],
  );
}

/**
 * The page's episodes with the entity's mention lines: the producer's (whole transcript read) or
 * the detector's, run on the lines the index found (only those and their context read).
 */
async function mentionsOf(db: Queryable, entity: ResolvedEntity, ids: string[], contextLines: number) {
  const { produced, detected: candidates } = await entityLines(
    db,
    { id: entity.entity.id, names: entity.names },
    ids,
  );
  const wanted = new Map<string, number[]>();
  for (const id of ids)
    if (!produced.has(id)) wanted.set(id, around(candidates.get(id) ?? [], contextLines, contextLines));
  const parts = await loadEpisodes(db, ids, wanted);
  const detector = nameDetector(entity);
  const mentions = new Map(
    [...parts].map(([id, episode]) => [
      id,
      entityMentions(episode, detector, produced.get(id), candidates.get(id) ?? []),
    ]),
  );
  return { parts, mentions };
}

/** Episodes and mentions per bucket over [since, until), by default the year before now. */
async function timeseries(db: Queryable, filters: Filters, interval: Interval, now: Date) {
  const until = filters.scope.until ?? now;
  const since = filters.scope.since ?? new Date(until.getTime() - YEAR);
  const buckets = bucketsOf(since, until, interval);
  const counts = await countByBucket(db, { ...filters.scope, since, until }, filters.keywords, interval);
  return timeseriesOf(interval, buckets, counts);
}

/** 422 semantic_search_disabled: this process runs with EARSHOT_SEMANTIC_SEARCH=off. */
function enabled(semantic: Semantic | undefined, text: string): Semantic {
  if (semantic) return semantic;
  throw new ValidationError('semantic_search_disabled', 'Semantic search is turned off on this server.', [
    { location: 'query.semantic_search', message: 'semantic search is off', value: text },
  ]);
}

/** The search surface (docs/search.md): episode search, mentions and their timeseries. */
export function searchRoutes(deps: {
  now(): Date;
  provider: EmbeddingProvider | undefined;
  statementTimeoutMs: number;
  /** The process's search slots per project (or x402 payer). */
  inSlot: SearchSlots;
}) {
  return async function routes(app: FastifyInstance) {
    // The index is loaded and refreshed for every request of the process at once: not bounded below.
    const semantic = deps.provider && semanticOf(app.db, deps.provider, app.log);
    // Every read of a request, each statement limited (docs/search.md, "Statement timeout").
    const db = boundedReads(app.db, deps.statementTimeoutMs);
    // Each request in one of its caller's slots (docs/search.md, "Searches in flight").
    const { inSlot } = deps;
    app.get<{ Querystring: SearchQuery }>(
      '/v1/podcasts/episodes/search',
      {
        schema: {
          tags,
          summary:
            'Search what was said in every transcript: keywords in passages of up to 5 lines, with filters',
          description: `Items are episodes, best passage first (or newest first with sort=recency).${semanticNote} ${BUSY_NOTE}`,
          querystring: searchQuerySchema,
          response: { 200: searchPageSchema, ...problemResponses(400, 401, 422, 429, 503) },
        },
      },
      inSlot(async (request) => {
        const q = request.query;
        const filters = await resolveFilters(db, q, 'search');
        const cursor = offsetCursor(app.cursors, { ...q });
        const offset = cursor.offset(q.cursor);
        if (q.semantic_search !== undefined)
          return semanticPage(db, enabled(semantic, q.semantic_search), q.semantic_search, filters, {
            query: q,
            offset,
            next: cursor.next,
          });
        const hits = await searchEpisodes(db, filters.scope, filters.keywords, q.sort, q.limit + 1, offset);
        const shown = hits.slice(0, q.limit);
        const ids = shown.map((h) => h.episode_id);
        const keywords = filters.keywords;
        let data: ReturnType<typeof searchItem>[];
        if (keywords === undefined && filters.entity !== undefined) {
          const { parts, mentions } = await mentionsOf(db, filters.entity, ids, WINDOW_CONTEXT_LINES);
          data = shown.flatMap((hit) => {
            const episode = parts.get(hit.episode_id);
            if (episode === undefined) return [];
            const found = mentions.get(hit.episode_id) ?? { indexes: [], lost: false };
            const bestStart = found.indexes[0] ?? null;
            return [searchItem(episode, { starts: [], bestStart, score: 0, mentions: found })];
          });
        } else {
          // Lines of the passages found (the first PASSAGES_PER_ITEM of each episode) and their context.
          const startsOf = new Map(
            shown.map((h) => [h.episode_id, (h.starts ?? []).slice(0, PASSAGES_PER_ITEM)]),
          );
          const wanted = new Map(
            [...startsOf].map(([id, starts]) => [
              id,
              around(starts, WINDOW_CONTEXT_LINES, PASSAGE_LINES - 1 + WINDOW_CONTEXT_LINES),
            ]),
          );
          // Without keywords nor entity an item has no windows: no line is read.
          const parts = await loadEpisodes(db, ids, wanted);
          data = shown.flatMap((hit) => {
            const episode = parts.get(hit.episode_id);
            if (episode === undefined) return [];
            const item = searchItem(episode, {
              keywords,
              starts: startsOf.get(hit.episode_id) ?? [],
              bestStart: hit.best_start,
              score: hit.score,
            });
            if ((hit.starts?.length ?? 0) > PASSAGES_PER_ITEM) item.truncated = true;
            return [item];
          });
        }
        const page: { data: typeof data; has_more: boolean; cursor?: string; diagnostics?: Diagnostics } = {
          data,
          has_more: hits.length > q.limit,
        };
        if (page.has_more) page.cursor = cursor.next(offset + q.limit);
        if (data.length === 0 && offset === 0)
          page.diagnostics = await diagnose(
            activeFilters(filters, q, (scope, keywords) => anyEpisode(db, scope, keywords)),
          );
        return page;
      }),
    );

    app.get<{ Querystring: TimeseriesQuery }>(
      '/v1/podcasts/episodes/timeseries',
      {
        schema: {
          tags,
          summary: 'Matching episodes and mentions per day, week or month (UTC, zero-filled)',
          description: `The same filters as episode search; since defaults to a year before until (default now).${semanticSeriesNote} ${BUSY_NOTE}`,
          querystring: episodeTimeseriesQuerySchema,
          response: { 200: timeseriesSchema, ...problemResponses(400, 401, 422, 429, 503) },
        },
      },
      inSlot(async (request) => {
        const q = request.query;
        const filters = await resolveFilters(db, q, 'search');
        if (q.semantic_search === undefined) return timeseries(db, filters, q.interval, deps.now());
        const on = enabled(semantic, q.semantic_search);
        const until = filters.scope.until ?? deps.now();
        assertSemanticTimeseries(q, filters.scope.since, until);
        return semanticTimeseries(db, on, q.semantic_search, filters, {
          since: filters.scope.since!,
          until,
          interval: q.interval,
        });
      }),
    );

    app.get<{ Querystring: MentionsQuery }>(
      '/v1/podcasts/mentions',
      {
        schema: {
          tags,
          summary: 'Episodes that mention an entity, newest first, with windows around each mention',
          description: BUSY_NOTE,
          querystring: mentionsQuerySchema,
          response: { 200: mentionsPageSchema, ...problemResponses(400, 401, 422, 429, 503) },
        },
      },
      inSlot(async (request) => {
        const q = request.query;
        const filters = await resolveFilters(db, q, 'mentions');
        const entity = requireEntity(filters);
        const after = q.cursor ? app.cursors.decode(q.cursor, 'cursor', isEpisodePosition) : undefined;
        const rows = await mentionEpisodes(db, filters.scope, q.limit + 1, after);
        const shown = rows.slice(0, q.limit);
        const { parts, mentions } = await mentionsOf(
          db,
          entity,
          shown.map((r) => r.i),
          q.context_lines,
        );
        const data = shown.flatMap((row) => {
          const episode = parts.get(row.i);
          const found = mentions.get(row.i);
          if (episode === undefined || found === undefined) return [];
          return [mentionItem(episode, found, q.context_lines)];
        });
        const last = shown.at(-1);
        const page: {
          entity: { id: string; name: string; slug: string; entity_type: string };
          data: typeof data;
          has_more: boolean;
          cursor?: string;
          diagnostics?: Diagnostics;
        } = {
          entity: {
            id: entity.entity.id,
            name: entity.entity.name,
            slug: entity.entity.slug,
            entity_type: entity.entity.entity_type,
          },
          data,
          has_more: rows.length > q.limit,
        };
        if (page.has_more && last) page.cursor = app.cursors.encode({ p: last.p, i: last.i });
        if (data.length === 0 && after === undefined)
          page.diagnostics = await diagnose(
            activeFilters(filters, q, async (scope: EpisodeScope, _k: KeywordFilter | undefined) =>
              scope.entity === undefined ? true : (await mentionEpisodes(db, scope, 1)).length > 0,
            ),
          );
        return page;
      }),
    );

    app.get<{ Querystring: TimeseriesQuery }>(
      '/v1/podcasts/mentions/timeseries',
      {
        schema: {
          tags,
          summary:
            "An entity's mentions and the episodes holding them per day, week or month (UTC, zero-filled)",
          description: BUSY_NOTE,
          querystring: mentionsTimeseriesQuerySchema,
          response: { 200: timeseriesSchema, ...problemResponses(400, 401, 422, 429, 503) },
        },
      },
      inSlot(async (request) => {
        const filters = await resolveFilters(db, request.query, 'mentions');
        requireEntity(filters);
        return timeseries(db, filters, request.query.interval, deps.now());
      }),
    );
  };
}
