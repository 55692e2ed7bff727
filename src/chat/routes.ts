import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { SecretBox } from '../crypto/secret-box.ts';
import type { Queryable } from '../db/db.ts';
import { BadRequestError, EarshotError } from '../errors.ts';
import { assertProjectAccess } from '../http/auth.ts';
import { pageByCreation, pageOf, pageQuery, toPage } from '../http/pagination.ts';
import { problemResponses } from '../http/problem.ts';
import {
  type PageRequest,
  type ProjectItemRequest,
  type ProjectRequest,
  projectItemParams,
  projectParams,
  str,
  time,
} from '../http/route-schemas.ts';
import {
  type ChannelLister,
  chatBotToken,
  deleteChatConnection,
  listChatConnections,
} from './connections.ts';

/** 502: the chat provider failed or refused; the detail says which. */
export class ChatProviderError extends EarshotError {
  readonly status = 502;
}

export interface ChatRouteDeps {
  db: Queryable;
  box: SecretBox;
  listChannels: ChannelLister;
  now(): Date;
}

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

export function chatConnectionRoutes(deps: ChatRouteDeps): FastifyPluginAsync {
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
        return pageByCreation(app.cursors, `chat:${projectId}`, request.query, (options) =>
          listChatConnections(app.db, projectId, options),
        );
      },
    );

    app.get<ProjectItemRequest & PageRequest>(
      `${base}/:id/channels`,
      {
        schema: {
          tags: ['chat'],
          summary: 'List the channels a connection can post to',
          params: projectItemParams,
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

    app.delete<ProjectItemRequest>(
      `${base}/:id`,
      {
        schema: {
          tags: ['chat'],
          summary: 'Delete a chat connection (soft); alerts naming it skip it',
          params: projectItemParams,
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
