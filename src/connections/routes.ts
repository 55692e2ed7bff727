import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { SecretBox } from '../crypto/secret-box.ts';
import { BadRequestError, EarshotError, NotFoundError } from '../errors.ts';
import { assertProjectAccess } from '../http/auth.ts';
import { pageOf, pageQuery, toPage } from '../http/pagination.ts';
import { problemResponses } from '../http/problem.ts';
import { id, projectParams, str, time } from '../http/route-schemas.ts';
import { type ChannelLister, chatBotToken, deleteChatConnection, listChatConnections } from './chat.ts';
import {
  createWebhookConnection,
  findWebhookConnection,
  listWebhookConnections,
  revokeWebhookConnection,
  rotateWebhookSecret,
  type WebhookConnectionDeps,
} from './webhooks.ts';

/** 502: the chat provider failed or refused; the detail says which. */
export class ChatProviderError extends EarshotError {
  readonly status = 502;
}

export interface ConnectionRouteDeps extends WebhookConnectionDeps {
  box: SecretBox;
  listChannels: ChannelLister;
}

const webhookConnection = {
  type: 'object',
  required: ['id', 'project_id', 'url', 'secret_prefix', 'surface', 'created_by', 'created_at'],
  properties: {
    id: str,
    project_id: str,
    url: str,
    secret_prefix: { type: 'string', description: 'The first 12 characters of the secret' },
    secret: { type: 'string', description: 'Only in the create and rotate responses' },
    surface: { type: 'string', enum: ['PLATFORM', 'SECOND_SURFACE'] },
    name: str,
    created_by: {
      type: ['object', 'null'],
      properties: { id: str, name: str },
      description: 'null when created with an API key',
    },
    created_at: time,
    revoked_at: time,
  },
} as const;

const chatConnection = {
  type: 'object',
  required: ['id', 'project_id', 'team_id', 'team_name', 'created_at', 'updated_at'],
  properties: {
    id: str,
    project_id: str,
    team_id: str,
    team_name: str,
    created_at: time,
    updated_at: time,
    deleted_at: time,
  },
} as const;

const chatChannel = {
  type: 'object',
  required: ['id', 'name'],
  properties: { id: str, name: str, is_private: { type: 'boolean' } },
} as const;

const connectionParams = {
  type: 'object',
  required: ['projectId', 'id'],
  properties: { projectId: id, id },
} as const;

interface ListPosition {
  p: string;
  c: string;
  i: string;
}

function decodePosition(app: FastifyInstance, cursor: string | undefined, list: string) {
  if (!cursor) return undefined;
  const position = app.cursors.decode<ListPosition>(cursor);
  if (position.p !== list) {
    throw new BadRequestError('invalid_cursor', 'The cursor belongs to another list.', [
      { location: 'query.cursor', message: 'issued for another list', value: cursor },
    ]);
  }
  return { createdAt: position.c, id: position.i };
}

type ProjectRequest = { Params: { projectId: string } };
type ConnectionRequest = { Params: { projectId: string; id: string } };
type PageRequest = { Querystring: { limit: number; cursor?: string } };

export function webhookConnectionRoutes(deps: ConnectionRouteDeps): FastifyPluginAsync {
  return async function routes(app: FastifyInstance) {
    const base = '/v1/projects/:projectId/webhooks/connections';

    app.post<ProjectRequest & { Body: { url: string; name?: string } }>(
      base,
      {
        schema: {
          tags: ['webhooks'],
          summary: 'Create a webhook connection; the signing secret is returned only here',
          params: projectParams,
          body: {
            type: 'object',
            required: ['url'],
            additionalProperties: false,
            properties: {
              url: { type: 'string', minLength: 1, description: 'https, resolving only to public addresses' },
              name: { type: 'string', maxLength: 200 },
            },
          },
          response: { 200: webhookConnection, ...problemResponses(401, 403, 422) },
        },
      },
      async (request) => {
        const { projectId } = request.params;
        assertProjectAccess(request, projectId);
        return createWebhookConnection(deps, {
          projectId,
          url: request.body.url,
          name: request.body.name ?? null,
        });
      },
    );

    app.get<ProjectRequest & PageRequest>(
      base,
      {
        schema: {
          tags: ['webhooks'],
          summary: "List a project's webhook connections, revoked ones included",
          params: projectParams,
          querystring: { type: 'object', properties: { ...pageQuery } },
          response: { 200: pageOf(webhookConnection), ...problemResponses(400, 401, 403) },
        },
      },
      async (request) => {
        const { projectId } = request.params;
        assertProjectAccess(request, projectId);
        const list = `webhooks:${projectId}`;
        const after = decodePosition(app, request.query.cursor, list);
        const rows = await listWebhookConnections(app.db, projectId, {
          limit: request.query.limit + 1,
          ...(after ? { after } : {}),
        });
        return toPage(
          rows,
          request.query.limit,
          app.cursors,
          (row) => ({ p: list, c: row.created_at, i: row.id }),
          (row) => row,
        );
      },
    );

    app.get<ConnectionRequest>(
      `${base}/:id`,
      {
        schema: {
          tags: ['webhooks'],
          summary: 'One webhook connection (the secret is never returned, only secret_prefix)',
          params: connectionParams,
          response: { 200: webhookConnection, ...problemResponses(401, 403, 404) },
        },
      },
      async (request) => {
        const { projectId, id: connectionId } = request.params;
        assertProjectAccess(request, projectId);
        const connection = await findWebhookConnection(app.db, connectionId);
        if (!connection || connection.project_id !== projectId) {
          throw new NotFoundError('webhook_connection_not_found', `No webhook connection ${connectionId}.`);
        }
        return connection;
      },
    );

    app.delete<ConnectionRequest>(
      `${base}/:id`,
      {
        schema: {
          tags: ['webhooks'],
          summary: 'Revoke a webhook connection: it stops delivering and stays readable with revoked_at',
          params: connectionParams,
          response: { 200: webhookConnection, ...problemResponses(401, 403, 404) },
        },
      },
      async (request) => {
        assertProjectAccess(request, request.params.projectId);
        return revokeWebhookConnection(deps, request.params.projectId, request.params.id);
      },
    );

    app.post<ConnectionRequest>(
      `${base}/:id/secret/rotate`,
      {
        schema: {
          tags: ['webhooks'],
          summary:
            'Replace the signing secret; the new one is returned once and the old one stops signing at once',
          params: connectionParams,
          response: { 200: webhookConnection, ...problemResponses(401, 403, 404, 409) },
        },
      },
      async (request) => {
        assertProjectAccess(request, request.params.projectId);
        return rotateWebhookSecret(deps, request.params.projectId, request.params.id);
      },
    );
  };
}

export function chatConnectionRoutes(deps: ConnectionRouteDeps): FastifyPluginAsync {
  return async function routes(app: FastifyInstance) {
    const base = '/v1/projects/:projectId/chat/connections';

    app.get<ProjectRequest & PageRequest>(
      base,
      {
        schema: {
          tags: ['chat'],
          summary: "List a project's connected chat workspaces",
          params: projectParams,
          querystring: { type: 'object', properties: { ...pageQuery } },
          response: { 200: pageOf(chatConnection), ...problemResponses(400, 401, 403) },
        },
      },
      async (request) => {
        const { projectId } = request.params;
        assertProjectAccess(request, projectId);
        const list = `chat:${projectId}`;
        const after = decodePosition(app, request.query.cursor, list);
        const rows = await listChatConnections(app.db, projectId, {
          limit: request.query.limit + 1,
          ...(after ? { after } : {}),
        });
        return toPage(
          rows,
          request.query.limit,
          app.cursors,
          (row) => ({ p: list, c: row.created_at, i: row.id }),
          (row) => row,
        );
      },
    );

    app.get<ConnectionRequest & PageRequest>(
      `${base}/:id/channels`,
      {
        schema: {
          tags: ['chat'],
          summary: 'List the channels a connection can post to',
          params: connectionParams,
          querystring: { type: 'object', properties: { ...pageQuery } },
          response: { 200: pageOf(chatChannel), ...problemResponses(400, 401, 403, 404, 409, 502) },
        },
      },
      async (request) => {
        const { projectId, id: connectionId } = request.params;
        assertProjectAccess(request, projectId);
        const botToken = await chatBotToken(deps, projectId, connectionId);
        const list = `channels:${connectionId}`;
        const after = request.query.cursor
          ? app.cursors.decode<{ p: string; o: number }>(request.query.cursor)
          : undefined;
        if (after && after.p !== list) {
          throw new BadRequestError('invalid_cursor', 'The cursor belongs to another list.', [
            {
              location: 'query.cursor',
              message: 'issued for another connection',
              value: request.query.cursor,
            },
          ]);
        }
        let channels: Awaited<ReturnType<ChannelLister>>;
        try {
          channels = await deps.listChannels({ botToken });
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          throw new ChatProviderError(
            'chat_provider_error',
            `The chat workspace did not list its channels: ${reason}`,
            [],
            {
              cause: error,
            },
          );
        }
        const offset = after?.o ?? 0;
        const limit = request.query.limit;
        const rows = channels
          .slice(offset, offset + limit + 1)
          .map((channel, index) => ({ channel, index: offset + index }));
        return toPage(
          rows,
          limit,
          app.cursors,
          (row) => ({ p: list, o: row.index + 1 }),
          (row) => row.channel,
        );
      },
    );

    app.delete<ConnectionRequest>(
      `${base}/:id`,
      {
        schema: {
          tags: ['chat'],
          summary: 'Delete a chat connection (soft); alerts naming it skip it',
          params: connectionParams,
          response: { 200: chatConnection, ...problemResponses(401, 403, 404) },
        },
      },
      async (request) => {
        assertProjectAccess(request, request.params.projectId);
        return deleteChatConnection(deps, request.params.projectId, request.params.id);
      },
    );
  };
}
