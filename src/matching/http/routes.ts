import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { listAlertMatches, type MatchListFilters } from '../../../projections/matches/queries.ts';
import { type AlertFilters, loadAlert } from '../../alerts/alert.ts';
import type { Db } from '../../db/db.ts';
import { BadRequestError, NotFoundError } from '../../errors.ts';
import type { EventStore } from '../../eventstore/port.ts';
import { assertOwned, assertProjectAccess, callerOf } from '../../http/auth.ts';
import { pageOf, pageQuery, toPage } from '../../http/pagination.ts';
import { problemResponses } from '../../http/problem.ts';
import { id, idParams, projectParams, str } from '../../http/route-schemas.ts';
import { lowestPopularityOf } from '../engine/popularity.ts';
import { DEFAULT_WINDOW_DAYS, MAX_WINDOW_DAYS, type PreviewService } from '../previews/preview.ts';
import {
  ALERT_MATCH_SUMMARIZED,
  ALERT_MATCHED,
  type AlertMatchedEventData,
  type AlertMatchSummarizedData,
  matchStream,
} from '../streams.ts';
import {
  episodeBlockSchema,
  type MatchDelivery,
  matchListItem,
  matchListItemSchema,
  matchResource,
  matchResourceSchema,
  windowSchema,
} from './match-resource.ts';

export interface MatchingRoutesDeps {
  store: EventStore;
  previews: PreviewService;
  /** The deliveries of a match (the delivery pipeline's), for GET /v1/alerts/matches/{id}. */
  deliveriesOfMatch?: (db: Db, matchId: string) => Promise<MatchDelivery[]>;
}

const previewStarted = {
  type: 'object',
  required: ['preview_id', 'status', 'window_days'],
  properties: {
    preview_id: str,
    status: { type: 'string', enum: ['in_progress', 'completed', 'failed'] },
    window_days: { type: 'integer' },
  },
} as const;

const {
  alert_id: _alertId,
  monitor_id: _monitorId,
  deliveries: _deliveries,
  ...sampleProperties
} = matchResourceSchema.properties;
const previewSchema = {
  type: 'object',
  required: ['preview_id', 'status', 'window_days', 'started_at'],
  properties: {
    ...previewStarted.properties,
    started_at: { type: 'string', format: 'date-time' },
    completed_at: { type: 'string', format: 'date-time' },
    total_matches: { type: 'integer' },
    by_day: {
      type: 'array',
      description: 'Every UTC date the window touches, oldest first; days without matches have count 0.',
      items: {
        type: 'object',
        required: ['date', 'count'],
        properties: { date: str, count: { type: 'integer' } },
      },
    },
    sample: {
      type: 'array',
      description:
        'The 5 most recently published matching episodes, as fully populated matches (no alert yet).',
      items: {
        type: 'object',
        properties: {
          ...sampleProperties,
          episode: episodeBlockSchema,
          windows: { type: 'array', items: windowSchema },
        },
      },
    },
    error: str,
  },
} as const;

interface ListPosition {
  a: string;
  d: string;
  i: string;
}

/** The list filters of the alert's current configuration (they also apply to matches made before a change). */
function listFilters(filters: AlertFilters): MatchListFilters {
  const minimumPopularity = lowestPopularityOf(filters.sourcePopularity ?? []);
  return {
    ...(filters.languages?.length ? { languages: filters.languages } : {}),
    relevantOnly: filters.relevance === 'RELEVANT',
    ...(minimumPopularity !== undefined ? { minimumPopularity } : {}),
    ...(filters.speakerRoles?.length ? { roles: filters.speakerRoles } : {}),
  };
}

export function matchingRoutes(deps: MatchingRoutesDeps): FastifyPluginAsync {
  return async function routes(app: FastifyInstance) {
    app.addSchema(matchListItemSchema);
    app.addSchema(matchResourceSchema);

    app.get<{ Params: { id: string }; Querystring: { limit: number; cursor?: string } }>(
      '/v1/alerts/:id/matches',
      {
        schema: {
          tags: ['alerts'],
          summary:
            "An alert's matches, newest first, filtered by the alert's current filters (no episode block)",
          params: idParams,
          querystring: { type: 'object', properties: { ...pageQuery } },
          response: { 200: pageOf({ $ref: 'AlertMatchListItem#' }), ...problemResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const alertId = request.params.id;
        // Folded from the stream rather than the read model: a just-created or just-changed alert
        // is seen at once. A deleted alert's history stays readable.
        const { state } = await loadAlert(deps.store, alertId);
        assertOwned(request, state.status === 'initial' ? undefined : state.alert.projectId, 'Alert');
        const { limit, cursor } = request.query;
        const position = cursor ? app.cursors.decode<ListPosition>(cursor) : undefined;
        if (position && position.a !== alertId) {
          throw new BadRequestError('invalid_cursor', 'The cursor belongs to another list.', [
            { location: 'query.cursor', message: "issued for another alert's matches", value: cursor },
          ]);
        }
        const rows = await listAlertMatches(app.db, alertId, {
          filters: listFilters(state.status === 'initial' ? {} : state.alert.filters),
          limit: limit + 1,
          ...(position ? { after: { detectedAt: position.d, id: position.i } } : {}),
        });
        return toPage(
          rows,
          limit,
          app.cursors,
          (row) => ({ a: alertId, d: row.data.detectedAt, i: row.data.matchId }),
          (row) => matchListItem(row.data, row.llmSummary),
        );
      },
    );

    app.get<{ Params: { id: string } }>(
      '/v1/alerts/matches/:id',
      {
        schema: {
          tags: ['alerts'],
          summary: 'One match, with its episode block, windows and deliveries',
          params: idParams,
          response: { 200: { $ref: 'AlertMatch#' }, ...problemResponses(401, 404) },
        },
      },
      async (request) => {
        const matchId = request.params.id;
        const events = await deps.store.readStream(matchStream(matchId));
        const matched = events.find((event) => event.type === ALERT_MATCHED)?.data as
          | AlertMatchedEventData
          | undefined;
        if (!matched) throw new NotFoundError('match_not_found', 'Match not found.');
        assertOwned(request, matched.projectId, 'Match');
        const summary = events.find((event) => event.type === ALERT_MATCH_SUMMARIZED)?.data as
          | AlertMatchSummarizedData
          | undefined;
        const deliveries = deps.deliveriesOfMatch ? await deps.deliveriesOfMatch(app.db, matchId) : [];
        return matchResource(matched, summary?.summary, deliveries);
      },
    );

    app.post<{ Params: { projectId: string }; Querystring: { window_days: number }; Body: unknown }>(
      '/v1/projects/:projectId/alerts/preview',
      {
        schema: {
          tags: ['alerts'],
          summary:
            'Estimate how often an alert would match (asynchronous: poll GET /v1/alerts/preview/{previewId})',
          description:
            'The id is the same for the same entity, kind, languages, speaker_roles and window: a repeated request ' +
            'returns the running or finished preview. relevance and source_popularity do not change the count. ' +
            'Answers 202 while the sweep runs (or waits for a slot), 200 when the result is already there, ' +
            '429 rate_limit_exceeded with Retry-After when the project or the process has too many sweeps.',
          params: projectParams,
          querystring: {
            type: 'object',
            properties: {
              window_days: {
                type: 'integer',
                minimum: 1,
                maximum: MAX_WINDOW_DAYS,
                default: DEFAULT_WINDOW_DAYS,
              },
            },
          },
          body: {
            type: 'object',
            required: ['entities'],
            properties: {
              entities: {
                type: 'array',
                description: 'Exactly one entity.',
                items: {
                  type: 'object',
                  required: ['entity_type', 'entity_id'],
                  properties: { entity_type: str, entity_id: str },
                },
              },
              kind: { type: 'string', description: 'ENTITY_MENTION (default) or PODCAST_SPEAKER' },
              filters: {
                type: 'object',
                properties: {
                  languages: { type: 'array', items: str },
                  relevance: str,
                  source_popularity: { type: 'array', items: str },
                  speaker_roles: { type: 'array', items: str, description: 'PODCAST_SPEAKER only, else 422' },
                },
              },
            },
          },
          response: {
            200: previewStarted,
            202: previewStarted,
            ...problemResponses(400, 401, 403, 422, 429),
          },
        },
      },
      async (request, reply) => {
        const { projectId } = request.params;
        assertProjectAccess(request, projectId);
        const preview = await deps.previews.start(callerOf(request), request.body, request.query.window_days);
        return reply
          .code(preview.status === 'in_progress' ? 202 : 200)
          .send({ preview_id: preview.preview_id, status: preview.status, window_days: preview.window_days });
      },
    );

    app.get<{ Params: { previewId: string } }>(
      '/v1/alerts/preview/:previewId',
      {
        schema: {
          tags: ['alerts'],
          summary: 'Poll a preview (kept one hour, then 404)',
          params: {
            type: 'object',
            required: ['previewId'],
            properties: { previewId: id },
          },
          response: { 200: previewSchema, ...problemResponses(401, 404) },
        },
      },
      async (request) => deps.previews.get(callerOf(request), request.params.previewId),
    );
  };
}
