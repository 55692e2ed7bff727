import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { listEpisodes, podcastSpeakers } from '../../projections/catalog-episodes/queries.ts';
import {
  formatsByIds,
  type PodcastFilters,
  type PodcastItemRow,
  podcastIdsByApple,
  podcastIdsByDirectory,
  podcastItemRows,
  resolvePodcastId,
} from '../../projections/podcasts/queries.ts';
import type { Queryable } from '../db/db.ts';
import { NotFoundError } from '../errors.ts';
import { pageOf, pageQuery } from '../http/pagination.ts';
import { problemResponses } from '../http/problem.ts';
import { BUSY_NOTE, type SearchSlots, searchesInFlight } from '../search/in-flight.ts';
import { FORMAT_SIGNALS, GUEST_FREQUENCIES } from './format-rules.ts';
import { episodePage, isEpisodePosition } from './pages.ts';
import { assertRange, instantOf, listOf, offsetCursor } from './params.ts';
import { objectOf, type PodcastItems, withMembers } from './podcast-items.ts';
import { speakerEntities } from './references.ts';
import type { responseCache } from './response-cache.ts';
import {
  episodeSchema,
  formatSchema,
  idParams,
  instant,
  podcastSchema,
  podcastSpeakerSchema,
} from './schemas.ts';
import { searchKey } from './search-key.ts';
import {
  podcastReferences,
  REFERENCE_CACHE,
  toEpisode,
  toFormat,
  toPodcast,
  toPodcastSpeaker,
} from './views.ts';

const commaList = (values: readonly string[], max: number) => {
  const one = `(${values.join('|')})`;
  return { type: 'string', maxLength: 200, pattern: `^${one}(,${one}){0,${max - 1}}$` } as const;
};

const podcastListQuery = {
  type: 'object',
  properties: {
    q: { type: 'string', maxLength: 200 },
    sort: { enum: ['relevance', 'popularity'] },
    slug: { type: 'string', minLength: 1, maxLength: 200 },
    topic_id: { type: 'string', minLength: 1, maxLength: 200 },
    language: { type: 'string', pattern: '^[A-Za-z]{2}$' },
    suitability_tier: { enum: ['SAFE', 'LIMITED', 'SENSITIVE', 'UNSAFE'] },
    min_popularity: { type: 'number', minimum: 0, maximum: 1 },
    guest_frequency: commaList(GUEST_FREQUENCIES, 5),
    format_signals: commaList(FORMAT_SIGNALS, 4),
    has_ads: { type: 'boolean' },
    has_video: { type: 'boolean' },
    min_avg_episode_minutes: { type: 'number', minimum: 0, maximum: 10080 },
    max_avg_episode_minutes: { type: 'number', minimum: 0, maximum: 10080 },
    min_episodes_per_week: { type: 'number', minimum: 0 },
    max_episodes_per_week: { type: 'number', minimum: 0 },
    publishing_status: { enum: ['active', 'dormant'] },
    ...pageQuery,
  },
} as const;

interface PodcastListQuery {
  q?: string;
  sort?: 'relevance' | 'popularity';
  slug?: string;
  topic_id?: string;
  language?: string;
  suitability_tier?: string;
  min_popularity?: number;
  guest_frequency?: string;
  format_signals?: string;
  has_ads?: boolean;
  has_video?: boolean;
  min_avg_episode_minutes?: number;
  max_avg_episode_minutes?: number;
  min_episodes_per_week?: number;
  max_episodes_per_week?: number;
  publishing_status?: 'active' | 'dormant';
  limit: number;
  cursor?: string;
}

const toItem = (item: PodcastItemRow, now: Date) =>
  toPodcast(item.podcast, {
    ...(item.format ? { format: item.format } : {}),
    topics: item.topics,
    ...(item.matchQuality ? { matchQuality: item.matchQuality } : {}),
    now,
  });

/** The content type fastify gives an answer it serializes: the routes that send their own JSON text set it. */
const JSON_TYPE = 'application/json; charset=utf-8';

/** Podcasts (with topics and compact formats) in the order of ids. */
async function podcastItems(db: Queryable, ids: readonly string[], now: Date, topicLimit = 10) {
  const byId = new Map((await podcastItemRows(db, ids, now, topicLimit)).map((r) => [r.podcast.id, r]));
  return ids.flatMap((id) => {
    const item = byId.get(id);
    return item ? [toItem(item, now)] : [];
  });
}

/** The most a show's speakers list (docs/catalog.md, "A show's speakers"). */
const SHOW_SPEAKERS = 10;

async function speakersOf(db: Queryable, podcastId: string) {
  const rows = await podcastSpeakers(db, podcastId, SHOW_SPEAKERS);
  const entities = await speakerEntities(
    db,
    rows.map((row) => row.entity_id ?? row.person_id),
  );
  return rows.map((row) => toPodcastSpeaker(row, entities));
}

export interface PodcastRouteDeps {
  now(): Date;
  /** The process's search slots (src/composition.ts): a list with `q` runs in one. */
  inSlot?: SearchSlots;
  /**
   * Fields another surface adds to GET /v1/podcasts/{id} (advertising: related, recommendations),
   * with every read model they come from, so the response cache knows when they change.
   */
  podcastExtras?: {
    properties: Record<string, object>;
    load(db: Queryable, id: string): Promise<object>;
    readModels: readonly { name: string }[];
  };
}

export function podcastRoutes(
  deps: PodcastRouteDeps,
  cache: ReturnType<typeof responseCache>,
  items: PodcastItems,
) {
  const extraProperties = {
    speakers: { type: 'array', items: podcastSpeakerSchema },
    ...deps.podcastExtras?.properties,
  };
  const extrasSchema = objectOf(extraProperties);
  return async function routes(app: FastifyInstance) {
    cache(app);
    app.addHook('onReady', async () => items.warm(app.db));
    const inSlot = deps.inSlot ?? searchesInFlight();
    const listHandler = inSlot(
      async (request: FastifyRequest<{ Querystring: PodcastListQuery }>, reply: FastifyReply) => {
        const query = request.query;
        assertRange(
          query.min_avg_episode_minutes,
          query.max_avg_episode_minutes,
          'min_avg_episode_minutes',
          'max_avg_episode_minutes',
        );
        assertRange(
          query.min_episodes_per_week,
          query.max_episodes_per_week,
          'min_episodes_per_week',
          'max_episodes_per_week',
        );
        const pages = offsetCursor(app.cursors, query as unknown as Record<string, unknown>);
        const offset = pages.offset(query.cursor);
        const now = deps.now();
        const q = query.q === undefined ? '' : searchKey(query.q);
        const filters: PodcastFilters = {
          q,
          sort: query.sort ?? 'relevance',
          now,
          ...(query.slug === undefined ? {} : { slug: query.slug }),
          ...(query.topic_id === undefined ? {} : { topicId: query.topic_id }),
          ...(query.language === undefined ? {} : { language: query.language }),
          ...(query.suitability_tier === undefined ? {} : { suitabilityTier: query.suitability_tier }),
          ...(query.min_popularity === undefined ? {} : { minPopularity: query.min_popularity }),
          ...(query.guest_frequency === undefined ? {} : { guestFrequency: listOf(query.guest_frequency)! }),
          ...(query.format_signals === undefined ? {} : { formatSignals: listOf(query.format_signals)! }),
          ...(query.has_ads === undefined ? {} : { hasAds: query.has_ads }),
          ...(query.has_video === undefined ? {} : { hasVideo: query.has_video }),
          ...(query.min_avg_episode_minutes === undefined
            ? {}
            : { minAvgMinutes: query.min_avg_episode_minutes }),
          ...(query.max_avg_episode_minutes === undefined
            ? {}
            : { maxAvgMinutes: query.max_avg_episode_minutes }),
          ...(query.min_episodes_per_week === undefined
            ? {}
            : { minEpisodesPerWeek: query.min_episodes_per_week }),
          ...(query.max_episodes_per_week === undefined
            ? {}
            : { maxEpisodesPerWeek: query.max_episodes_per_week }),
          ...(query.publishing_status === undefined ? {} : { publishingStatus: query.publishing_status }),
        };
        const page = await items.page(app.db, reply, filters, query.limit, offset, () =>
          pages.next(offset + query.limit),
        );
        reply.type(JSON_TYPE);
        return page;
      },
      (request) => request.query.q !== undefined,
    );
    const listSchema = (summary: string) => ({
      tags: ['catalog'],
      summary,
      description: `With q, a search: ${BUSY_NOTE}`,
      querystring: podcastListQuery,
      response: { 200: pageOf(podcastSchema), ...problemResponses(400, 401, 422, 429) },
    });
    app.get<{ Querystring: PodcastListQuery }>(
      '/v1/podcasts',
      {
        config: { catalogCache: true },
        schema: listSchema(
          'List and search podcasts (q is kept for compatibility; prefer /v1/podcasts/search)',
        ),
      },
      listHandler,
    );
    app.get<{ Querystring: PodcastListQuery }>(
      '/v1/podcasts/search',
      {
        config: { catalogCache: true },
        schema: listSchema('Search podcasts: forgiving q, filters, best matches first'),
      },
      listHandler,
    );

    app.get<{ Querystring: { platform: string; identifier: string } }>(
      '/v1/podcasts/lookup',
      {
        config: { catalogCache: true },
        schema: {
          tags: ['catalog'],
          summary: 'Podcasts by directory id (Apple or another platform)',
          querystring: {
            type: 'object',
            required: ['platform', 'identifier'],
            properties: {
              platform: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,39}$' },
              identifier: { type: 'string', minLength: 1, maxLength: 4000, pattern: '^[^,]+(,[^,]+){0,99}$' },
            },
          },
          response: {
            200: {
              type: 'object',
              required: ['results'],
              properties: {
                results: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['identifier'],
                    properties: { identifier: { type: 'string' }, podcast: podcastSchema },
                  },
                },
              },
            },
            ...problemResponses(400, 401),
          },
        },
      },
      async (request) => {
        const identifiers = listOf(request.query.identifier) ?? [];
        const found =
          request.query.platform === 'apple'
            ? await podcastIdsByApple(app.db, identifiers)
            : await podcastIdsByDirectory(app.db, request.query.platform, identifiers);
        const now = deps.now();
        const items = await podcastItems(app.db, [...new Set(found.values())], now);
        const byId = new Map(items.map((p) => [p.id, p]));
        return {
          results: identifiers.map((identifier) => {
            const id = found.get(identifier);
            const podcast = id ? byId.get(id) : undefined;
            return podcast ? { identifier, podcast } : { identifier };
          }),
        };
      },
    );

    app.get<{ Params: { id: string }; Querystring: { topic_limit: number } }>(
      '/v1/podcasts/:id',
      {
        config: {
          // Its related shows and recommendations hold podcast references.
          catalogCache: deps.podcastExtras
            ? { readModels: [...deps.podcastExtras.readModels, ...REFERENCE_CACHE.readModels] }
            : true,
        },
        schema: {
          tags: ['catalog'],
          summary: 'One podcast by id, slug or Apple id',
          params: idParams,
          querystring: {
            type: 'object',
            properties: { topic_limit: { type: 'integer', minimum: 0, maximum: 100, default: 10 } },
          },
          response: {
            200: { ...podcastSchema, properties: { ...podcastSchema.properties, ...extraProperties } },
            ...problemResponses(400, 401, 404),
          },
        },
      },
      async (request, reply) => {
        const id = await podcastIdOr404(app.db, request.params.id);
        const [item, speakers, extras] = await Promise.all([
          items.one(app.db, reply, id, deps.now(), request.query.topic_limit),
          speakersOf(app.db, id),
          deps.podcastExtras?.load(app.db, id),
        ]);
        if (item === undefined)
          throw new NotFoundError('podcast_not_found', `No podcast ${request.params.id}.`);
        reply.type(JSON_TYPE);
        return withMembers(reply, item, extrasSchema, {
          ...(speakers.length ? { speakers } : {}),
          ...extras,
        });
      },
    );

    app.get<{ Params: { id: string } }>(
      '/v1/podcasts/:id/format',
      {
        config: { catalogCache: true },
        schema: {
          tags: ['catalog'],
          summary: "A podcast's format profile, computed from its episodes",
          params: idParams,
          response: { 200: formatSchema, ...problemResponses(401, 404) },
        },
      },
      async (request) => {
        const id = await podcastIdOr404(app.db, request.params.id);
        const now = deps.now();
        const [format] = await formatsByIds(app.db, [id], now);
        if (!format)
          throw new NotFoundError(
            'format_not_computed',
            `The format of podcast ${request.params.id} is not computed yet: it has no episodes.`,
          );
        return toFormat(format, now);
      },
    );

    app.get<{
      Params: { id: string };
      Querystring: {
        title?: string;
        published_after?: string;
        published_before?: string;
        limit: number;
        cursor?: string;
      };
    }>(
      '/v1/podcasts/:id/episodes',
      {
        config: { catalogCache: REFERENCE_CACHE },
        schema: {
          tags: ['catalog'],
          summary: "A podcast's episodes, newest first",
          params: idParams,
          querystring: {
            type: 'object',
            properties: {
              title: { type: 'string', minLength: 1, maxLength: 200 },
              published_after: instant,
              published_before: instant,
              ...pageQuery,
            },
          },
          response: { 200: pageOf(episodeSchema), ...problemResponses(400, 401, 404, 422) },
        },
      },
      async (request) => {
        const { title, limit, cursor } = request.query;
        const publishedAfter = instantOf(request.query.published_after);
        const publishedBefore = instantOf(request.query.published_before);
        assertRange(publishedAfter, publishedBefore, 'published_after', 'published_before');
        const id = await podcastIdOr404(app.db, request.params.id);
        const after = cursor ? app.cursors.decode(cursor, 'cursor', isEpisodePosition) : undefined;
        const rows = await listEpisodes(
          app.db,
          {
            podcastId: id,
            ...(title === undefined ? {} : { title }),
            ...(publishedAfter ? { publishedAfter } : {}),
            ...(publishedBefore ? { publishedBefore } : {}),
          },
          limit + 1,
          after,
        );
        const podcasts = await podcastReferences(app.db, [id]);
        return episodePage(app.cursors, rows, limit, (row) => toEpisode(row, podcasts.get(row.podcast_id)));
      },
    );
  };
}

export async function podcastIdOr404(db: Queryable, ref: string): Promise<string> {
  const id = await resolvePodcastId(db, ref);
  if (!id) throw new NotFoundError('podcast_not_found', `No podcast ${ref}.`);
  return id;
}
