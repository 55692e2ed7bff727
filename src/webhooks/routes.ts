import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { NotFoundError } from '../errors.ts';
import { assertProjectAccess } from '../http/auth.ts';
import { pageByCreation, pageOf, pageQuery } from '../http/pagination.ts';
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
  createWebhookConnection,
  findWebhookConnection,
  listWebhookConnections,
  revokeWebhookConnection,
  rotateWebhookSecret,
  type WebhookConnectionDeps,
} from './connections.ts';

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

export function webhookConnectionRoutes(deps: WebhookConnectionDeps): FastifyPluginAsync {
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
        return pageByCreation(app.cursors, `webhooks:${projectId}`, request.query, (options) =>
          listWebhookConnections(app.db, projectId, options),
        );
      },
    );

    app.get<ProjectItemRequest>(
      `${base}/:id`,
      {
        schema: {
          tags: ['webhooks'],
          summary: 'One webhook connection (the secret is never returned, only secret_prefix)',
          params: projectItemParams,
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

    app.delete<ProjectItemRequest>(
      `${base}/:id`,
      {
        schema: {
          tags: ['webhooks'],
          summary: 'Revoke a webhook connection: it stops delivering and stays readable with revoked_at',
          params: projectItemParams,
          response: { 200: webhookConnection, ...problemResponses(401, 403, 404) },
        },
      },
      async (request) => {
        assertProjectAccess(request, request.params.projectId);
        return revokeWebhookConnection(deps, request.params.projectId, request.params.id);
      },
    );

    app.post<ProjectItemRequest>(
      `${base}/:id/secret/rotate`,
      {
        schema: {
          tags: ['webhooks'],
          summary:
            'Replace the signing secret; the new one is returned once and the old one stops signing at once',
          params: projectItemParams,
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
