import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { listAlerts } from '../../projections/alerts/queries.ts';
import { BadRequestError } from '../errors.ts';
import { assertProjectAccess, callerOf } from '../http/auth.ts';
import { pageOf, pageQuery, toPage } from '../http/pagination.ts';
import { problemResponses } from '../http/problem.ts';
import { idParams, projectParams, str, strings } from '../http/route-schemas.ts';
import { alertResource, alertResourceSchema } from './resource.ts';
import type { AlertService } from './service.ts';
import { MAX_NOTIFICATIONS } from './values.ts';

/**
 * Types only: value sets are case-insensitive (speaker roles, enums) and some rules carry their
 * own error codes (exactly one entity: invalid_parameter), so the values are judged in input.ts.
 */
const configurationProperties = {
  title: { type: 'string', description: 'Label; appears in the email subject. 1–200 characters.' },
  description: { type: ['string', 'null'], description: 'Free text; null clears it.' },
  kind: { type: 'string', description: 'ENTITY_MENTION (default) or PODCAST_SPEAKER; fixed at creation.' },
  delivery_cadence: { type: 'string', description: 'REALTIME (default), DAILY or WEEKLY.' },
  entities: {
    type: 'array',
    description: 'Exactly one entity (else 422 invalid_parameter).',
    items: {
      type: 'object',
      required: ['entity_type', 'entity_id'],
      properties: {
        entity_type: { type: 'string', description: 'PERSON, COMPANY or KNOWLEDGE_GRAPH_ENTITY' },
        entity_id: str,
      },
    },
  },
  notifications: {
    type: 'array',
    minItems: 1,
    maxItems: MAX_NOTIFICATIONS,
    description:
      '{type EMAIL, email} | {type CHAT, chat_connection_id, chat_channel_id} | {type WEBHOOK, webhook_connection_id}',
    items: {
      type: 'object',
      required: ['type'],
      properties: {
        type: str,
        email: str,
        chat_connection_id: str,
        chat_channel_id: str,
        webhook_connection_id: str,
      },
    },
  },
  filters: {
    type: 'object',
    description: 'Replaces the whole set on update; {} clears it.',
    properties: {
      languages: { ...strings, description: 'ISO 639-1 codes, matched on the primary subtag' },
      relevance: { type: 'string', description: 'RELEVANT or ALL (default)' },
      source_popularity: { ...strings, description: 'TOP_PODCAST, VERY_POPULAR, POPULAR' },
      speaker_roles: {
        ...strings,
        description: 'The 13 non-host speaker roles; PODCAST_SPEAKER alerts only',
      },
    },
  },
  is_active: { type: 'boolean', description: 'false pauses, true resumes.' },
} as const;

const tokenQuery = {
  type: 'object',
  properties: {
    token: { type: 'string', maxLength: 200, description: 'The token from the email footer link.' },
  },
} as const;
const disableView = {
  type: 'object',
  required: ['alert', 'email', 'status', 'is_active'],
  properties: {
    alert: {
      type: 'object',
      required: ['id', 'title', 'kind'],
      properties: { id: str, title: str, kind: str },
    },
    email: str,
    status: { type: 'string', enum: ['active', 'paused', 'disabled', 'deleted'] },
    is_active: { type: 'boolean' },
  },
} as const;

interface ListPosition {
  p: string;
  c: string;
  i: string;
}

export function alertRoutes(service: AlertService): FastifyPluginAsync {
  return async function routes(app: FastifyInstance) {
    // Inline, not addSchema: a schema added in this plugin would give it a fresh schema controller
    // without the app's validator compiler (bodies would then be type-coerced).
    const alert = alertResourceSchema;

    app.post<{ Params: { projectId: string }; Body: unknown }>(
      '/v1/projects/:projectId/alerts',
      {
        schema: {
          tags: ['alerts'],
          summary: 'Create an alert (also runs a 7-day backfill that never notifies)',
          params: projectParams,
          body: {
            type: 'object',
            required: ['title', 'entities', 'notifications'],
            properties: configurationProperties,
          },
          response: { 200: alert, ...problemResponses(400, 401, 402, 403, 422) },
        },
      },
      async (request) => {
        assertProjectAccess(request, request.params.projectId);
        return service.create(callerOf(request), request.body);
      },
    );

    app.get<{ Params: { projectId: string }; Querystring: { limit: number; cursor?: string } }>(
      '/v1/projects/:projectId/alerts',
      {
        schema: {
          tags: ['alerts'],
          summary: "List a project's alerts, newest first (deleted ones are gone)",
          params: projectParams,
          querystring: { type: 'object', properties: { ...pageQuery } },
          response: { 200: pageOf(alert), ...problemResponses(400, 401, 403) },
        },
      },
      async (request) => {
        const { projectId } = request.params;
        assertProjectAccess(request, projectId);
        const { limit, cursor } = request.query;
        const position = cursor ? app.cursors.decode<ListPosition>(cursor) : undefined;
        if (position && position.p !== projectId) {
          throw new BadRequestError('invalid_cursor', 'The cursor belongs to another list.', [
            { location: 'query.cursor', message: "issued for another project's alerts", value: cursor },
          ]);
        }
        const rows = await listAlerts(app.db, projectId, {
          limit: limit + 1,
          ...(position ? { after: { createdAt: position.c, id: position.i } } : {}),
        });
        return toPage(
          rows,
          limit,
          app.cursors,
          (row) => ({ p: projectId, c: row.alert.createdAt, i: row.alert.id }),
          (row) => alertResource(row.alert, row.status),
        );
      },
    );

    app.get<{ Querystring: { token?: string } }>(
      '/v1/alerts/disable',
      {
        config: { auth: 'public' },
        schema: {
          tags: ['alerts'],
          summary: 'Check an email-footer disable token (public)',
          querystring: tokenQuery,
          security: [],
          response: { 200: disableView, ...problemResponses(400, 404) },
        },
      },
      async (request) => service.inspectDisableToken(request.query.token),
    );

    app.post<{ Querystring: { token?: string }; Body: unknown }>(
      '/v1/alerts/disable',
      {
        config: { auth: 'public' },
        schema: {
          tags: ['alerts'],
          summary: 'Disable an alert with an email-footer token (public; RFC 8058 one-click)',
          description:
            'The token comes in the query (the List-Unsubscribe URL) or as `token` in a form or JSON body. A body of ' +
            '`List-Unsubscribe=One-Click` (application/x-www-form-urlencoded) is accepted. Answered without a redirect; ' +
            'repeating it is harmless.',
          querystring: tokenQuery,
          security: [],
          response: { 200: disableView, ...problemResponses(400, 404) },
        },
      },
      async (request) => {
        const body = request.body;
        const fromBody = body && typeof body === 'object' && 'token' in body ? body.token : undefined;
        return service.disableByToken(request.query.token ?? fromBody);
      },
    );

    app.get<{ Params: { id: string } }>(
      '/v1/alerts/:id',
      {
        schema: {
          tags: ['alerts'],
          summary: 'One alert',
          params: idParams,
          response: { 200: alert, ...problemResponses(401, 404) },
        },
      },
      async (request) => service.get(callerOf(request), request.params.id),
    );

    app.patch<{ Params: { id: string }; Body: unknown }>(
      '/v1/alerts/:id',
      {
        schema: {
          tags: ['alerts'],
          summary: 'Update, pause (is_active false) or resume (is_active true) an alert',
          params: idParams,
          body: { type: 'object', properties: configurationProperties },
          response: { 200: alert, ...problemResponses(400, 401, 402, 404, 409, 422) },
        },
      },
      async (request) => service.update(callerOf(request), request.params.id, request.body),
    );

    app.delete<{ Params: { id: string } }>(
      '/v1/alerts/:id',
      {
        schema: {
          tags: ['alerts'],
          summary: 'Delete an alert (soft: its matches and deliveries stay)',
          params: idParams,
          response: { 204: { type: 'null', description: 'Deleted' }, ...problemResponses(401, 404, 409) },
        },
      },
      async (request, reply) => {
        await service.delete(callerOf(request), request.params.id);
        return reply.code(204).send();
      },
    );
  };
}
