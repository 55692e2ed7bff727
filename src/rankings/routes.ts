import type { FastifyInstance } from 'fastify';
import {
  baselineCapture,
  captureEntries,
  currentRankingsOfPodcast,
  findChart,
  type HistoryPosition,
  type RankingRow,
  type RankPosition,
  rankingHistory,
} from '../../projections/chart_captures/queries.ts';
import { assertRange, instantOf } from '../catalog/params.ts';
import { idParams, instant, podcastReferenceSchema } from '../catalog/schemas.ts';
import { type PodcastReference, podcastReferences } from '../catalog/views.ts';
import type { Queryable } from '../db/db.ts';
import { compact } from '../entities/view.ts';
import { BadRequestError, NotFoundError, ValidationError } from '../errors.ts';
import type { CursorCodec } from '../http/cursor.ts';
import { pageOf } from '../http/pagination.ts';
import { problemResponses } from '../http/problem.ts';
import { uuidFromName } from '../ids.ts';
import { type Change, compareCaptures, type Mover } from './movers.ts';
import { rankedPodcastId } from './podcast-id.ts';

const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const time = { type: 'string', format: 'date-time' } as const;

const rankingProperties = {
  id: str,
  external_id: str,
  chart_type: str,
  source: str,
  captured_at: time,
  is_current: { type: 'boolean' },
  rank: int,
  category: {
    type: 'object',
    properties: { name: str, slug: str, external_id: str, parent_slug: str },
  },
  country: str,
  external_url: str,
  growth_indicator: str,
  previous_rank: int,
  chart_total: int,
  reach_pct: { type: 'number' },
  view_count: int,
  weekly_avg_downloads: int,
  channel_subscriber_count: int,
  source_updated_at: time,
  show: {
    type: 'object',
    required: ['name'],
    properties: {
      name: str,
      description: str,
      feed_url: str,
      image_url: str,
      language: str,
      publisher: str,
      content_advisory_rating: str,
      latest_release_date: time,
      total_episodes: int,
      genres: { type: 'array', items: { type: 'object', properties: { external_id: str, name: str } } },
    },
  },
  podcast: podcastReferenceSchema,
} as const;

const rankingSchema = {
  type: 'object',
  required: ['id', 'external_id', 'chart_type', 'source', 'captured_at', 'is_current', 'rank', 'show'],
  properties: rankingProperties,
} as const;

const moverSchema = {
  type: 'object',
  required: ['id', 'external_id', 'chart_type', 'source', 'captured_at', 'is_current', 'show', 'change'],
  properties: {
    ...rankingProperties,
    change: { enum: ['up', 'down', 'new', 'exit'] },
    delta: int,
    baseline_captured_at: time,
  },
} as const;

/** Rankings return every row when limit is omitted. */
const rankingsPage = {
  limit: { type: 'integer', minimum: 1, maximum: 100 },
  cursor: { type: 'string', minLength: 1, maxLength: 2048 },
} as const;

const chartQuery = {
  source: { enum: ['apple', 'spotify', 'youtube'], default: 'apple' },
  chart_type: { type: 'string', minLength: 1, maxLength: 100, default: 'top_podcasts' },
  country: { type: 'string', pattern: '^[A-Za-z]{2}$', default: 'us' },
  category_slug: { type: 'string', minLength: 1, maxLength: 200 },
} as const;

interface PageQuery {
  limit?: number;
  cursor?: string;
}
interface ChartQuery extends PageQuery {
  source: string;
  chart_type: string;
  country: string;
  category_slug?: string;
}

type Podcasts = ReadonlyMap<string, PodcastReference>;

/** The catalog's references of the rows' shows (the Ranking's `podcast`). */
const podcastsOf = (db: Queryable, rows: readonly RankingRow[]) =>
  podcastReferences(
    db,
    rows.flatMap((row) => (row.podcast_id ? [row.podcast_id] : [])),
  );

export function toRanking(row: RankingRow, podcasts: Podcasts) {
  const { entry } = row;
  return compact({
    id: uuidFromName(`earshot:ranking:${row.chart_key}@${row.captured_at.toISOString()}#${row.rank}`),
    external_id: entry.external_id,
    chart_type: row.chart_type,
    source: row.source,
    captured_at: row.captured_at.toISOString(),
    is_current: row.is_current,
    rank: row.rank,
    category: row.category ? compact({ ...row.category }) : null,
    country: row.country,
    external_url: entry.external_url,
    growth_indicator: entry.growth_indicator,
    previous_rank: row.previous_rank,
    chart_total: row.chart_total,
    reach_pct: entry.reach_pct,
    view_count: entry.view_count,
    weekly_avg_downloads: entry.weekly_avg_downloads,
    channel_subscriber_count: entry.channel_subscriber_count,
    source_updated_at: entry.source_updated_at,
    show: entry.show,
    // A show the catalog does not hold (yet) keeps the chart's name for its title.
    podcast: row.podcast_id
      ? (podcasts.get(row.podcast_id) ?? { id: row.podcast_id, title: entry.show.name })
      : null,
  });
}

function toMover(mover: Mover, podcasts: Podcasts) {
  const { rank: _rank, previous_rank: _previous, ...ranking } = toRanking(mover.row, podcasts);
  return compact({
    ...ranking,
    ...(mover.change !== 'exit' && { rank: mover.row.rank }),
    previous_rank: mover.baselineRank,
    change: mover.change,
    delta: mover.delta,
    baseline_captured_at: mover.baselineAt.toISOString(),
  });
}

/** A cursor's position, refused when it was issued for other parameters. */
function positionOf<T extends { q: unknown }>(
  cursors: CursorCodec,
  cursor: string | undefined,
  query: unknown,
): T | null {
  if (cursor === undefined) return null;
  const position = cursors.decode<T>(cursor);
  if (JSON.stringify(position.q) !== JSON.stringify(query))
    throw new BadRequestError('invalid_cursor', 'The cursor belongs to another request.', [
      { location: 'query.cursor', message: 'issued for different parameters', value: cursor },
    ]);
  return position;
}

/** limit + 1 rows tell whether more exist; no limit fetches all. */
function page<Row, Item>(
  rows: Row[],
  limit: number | undefined,
  toItem: (row: Row) => Item,
  cursorOf: (last: Row) => string,
) {
  if (limit === undefined || rows.length <= limit) return { data: rows.map(toItem), has_more: false };
  const shown = rows.slice(0, limit);
  return { data: shown.map(toItem), has_more: true, cursor: cursorOf(shown.at(-1)!) };
}

async function podcastIdOf(app: FastifyInstance, id: string): Promise<string> {
  const podcastId = await rankedPodcastId(app.db, id);
  if (!podcastId) throw new NotFoundError('podcast_not_found', `No podcast ${id}.`);
  return podcastId;
}

const chartOf = (query: ChartQuery) => ({
  source: query.source,
  chart_type: query.chart_type,
  country: query.country.toLowerCase(),
  category_slug: query.category_slug ?? '',
});

export async function rankingRoutes(app: FastifyInstance) {
  app.get<{ Params: { id: string }; Querystring: PageQuery }>(
    '/v1/podcasts/:id/rankings',
    {
      schema: {
        tags: ['rankings'],
        summary: "A podcast's live chart appearances, best rank first; all of them when limit is omitted",
        params: idParams,
        querystring: { type: 'object', properties: rankingsPage },
        response: { 200: pageOf(rankingSchema), ...problemResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      const podcastId = await podcastIdOf(app, request.params.id);
      const after = positionOf<{ q: string; at: RankPosition }>(app.cursors, cursor, podcastId);
      const rows = await currentRankingsOfPodcast(app.db, podcastId, {
        limit: limit === undefined ? null : limit + 1,
        after: after?.at ?? null,
      });
      const podcasts = await podcastsOf(app.db, rows);
      return page(
        rows,
        limit,
        (row) => toRanking(row, podcasts),
        (last) => app.cursors.encode({ q: podcastId, at: { rank: last.rank, chart_key: last.chart_key } }),
      );
    },
  );

  app.get<{ Querystring: ChartQuery & { min_rank: number; max_rank: number } }>(
    '/v1/podcasts/rankings',
    {
      schema: {
        tags: ['rankings'],
        summary: "One chart's latest capture, by rank; all of it when limit is omitted",
        querystring: {
          type: 'object',
          properties: {
            ...chartQuery,
            min_rank: { type: 'integer', minimum: 1, maximum: 500, default: 1 },
            max_rank: { type: 'integer', minimum: 1, maximum: 500, default: 500 },
            ...rankingsPage,
          },
        },
        response: { 200: pageOf(rankingSchema), ...problemResponses(400, 401, 422) },
      },
    },
    async (request) => {
      const { min_rank: minRank, max_rank: maxRank, limit, cursor } = request.query;
      assertRange(minRank, maxRank, 'min_rank', 'max_rank');
      const selector = chartOf(request.query);
      const key = { ...selector, minRank, maxRank };
      const after = positionOf<{ q: typeof key; at: string; r: number }>(app.cursors, cursor, key);
      const chart = await findChart(app.db, selector);
      if (!chart) return { data: [], has_more: false };
      const capturedAt = after ? new Date(after.at) : chart.latest_captured_at;
      const rows = await captureEntries(app.db, {
        chartKey: chart.chart_key,
        capturedAt,
        minRank,
        maxRank,
        afterRank: after?.r ?? null,
        limit: limit === undefined ? null : limit + 1,
      });
      const podcasts = await podcastsOf(app.db, rows);
      return page(
        rows,
        limit,
        (row) => toRanking(row, podcasts),
        (last) => app.cursors.encode({ q: key, at: capturedAt.toISOString(), r: last.rank }),
      );
    },
  );

  app.get<{ Querystring: ChartQuery & { window_days: number; change: 'all' | Change } }>(
    '/v1/podcasts/rankings/movers',
    {
      schema: {
        tags: ['rankings'],
        summary: "A chart's movers: its latest capture against the one window_days before",
        querystring: {
          type: 'object',
          properties: {
            ...chartQuery,
            window_days: { type: 'integer', minimum: 1, maximum: 30, default: 7 },
            change: { enum: ['all', 'up', 'down', 'new', 'exit'], default: 'all' },
            ...rankingsPage,
          },
        },
        response: { 200: pageOf(moverSchema), ...problemResponses(400, 401) },
      },
    },
    async (request) => {
      const { window_days: windowDays, change, limit, cursor } = request.query;
      const selector = chartOf(request.query);
      const key = { ...selector, windowDays, change };
      const after = positionOf<{ q: typeof key; l: string; b: string; o: number }>(app.cursors, cursor, key);
      const chart = await findChart(app.db, selector);
      if (!chart) return { data: [], has_more: false };
      const latest = after ? new Date(after.l) : chart.latest_captured_at;
      const baseline = after
        ? new Date(after.b)
        : await baselineCapture(app.db, chart.chart_key, latest, windowDays);
      const entriesOf = (capturedAt: Date) =>
        captureEntries(app.db, {
          chartKey: chart.chart_key,
          capturedAt,
          minRank: 1,
          maxRank: 500,
          afterRank: null,
          limit: null,
        });
      const movers = compareCaptures(await entriesOf(latest), await entriesOf(baseline), baseline).filter(
        (mover) => change === 'all' || mover.change === change,
      );
      const offset = after?.o ?? 0;
      const rest = movers.slice(offset);
      const podcasts = await podcastsOf(
        app.db,
        rest.slice(0, limit ?? rest.length).map((mover) => mover.row),
      );
      return page(
        rest,
        limit,
        (mover) => toMover(mover, podcasts),
        () =>
          app.cursors.encode({
            q: key,
            l: latest.toISOString(),
            b: baseline.toISOString(),
            o: offset + limit!,
          }),
      );
    },
  );

  app.get<{
    Params: { id: string };
    Querystring: PageQuery & {
      source?: string;
      country?: string;
      category_slug?: string;
      since?: string;
      until?: string;
    };
  }>(
    '/v1/podcasts/:id/rankings/history',
    {
      schema: {
        tags: ['rankings'],
        summary: "A podcast's entries in every capture, oldest first; all of them when limit is omitted",
        params: idParams,
        querystring: {
          type: 'object',
          properties: {
            source: { enum: ['apple', 'spotify', 'youtube'] },
            country: { type: 'string', pattern: '^[A-Za-z]{2}$' },
            category_slug: chartQuery.category_slug,
            since: instant,
            until: instant,
            ...rankingsPage,
          },
        },
        response: { 200: pageOf(rankingSchema), ...problemResponses(400, 401, 404, 422) },
      },
    },
    async (request) => {
      const { source, country, category_slug: categorySlug, since, until, limit, cursor } = request.query;
      if (categorySlug !== undefined && source === undefined)
        throw new ValidationError(
          'invalid_parameter',
          'category_slug needs source: categories belong to one source.',
          [{ location: 'query.category_slug', message: 'requires source', value: categorySlug }],
        );
      const [from, to] = [instantOf(since), instantOf(until)];
      assertRange(from, to, 'since', 'until');
      const podcastId = await podcastIdOf(app, request.params.id);
      const filter = {
        podcastId,
        source: source ?? null,
        country: country?.toLowerCase() ?? null,
        categorySlug: categorySlug ?? null,
        since: from?.toISOString() ?? null,
        until: to?.toISOString() ?? null,
      };
      const after = positionOf<{ q: typeof filter; at: HistoryPosition }>(app.cursors, cursor, filter);
      const rows = await rankingHistory(app.db, filter, {
        limit: limit === undefined ? null : limit + 1,
        after: after?.at ?? null,
      });
      const podcasts = await podcastsOf(app.db, rows);
      return page(
        rows,
        limit,
        (row) => toRanking(row, podcasts),
        (last) =>
          app.cursors.encode({
            q: filter,
            at: { captured_at: last.captured_at.toISOString(), chart_key: last.chart_key },
          }),
      );
    },
  );
}
