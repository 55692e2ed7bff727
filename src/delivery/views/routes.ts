import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { findAlert } from '../../../projections/alerts/queries.ts';
import {
  type DeliveryPosition,
  deliveriesOfMatches,
  deliveryAttempts,
  deliveryMatches,
  findDelivery,
  listAlertDeliveries,
} from '../../../projections/deliveries/queries.ts';
import { type Alert, loadAlert } from '../../alerts/alert.ts';
import { BadRequestError, ForbiddenError, NotFoundError } from '../../errors.ts';
import type { EventStore } from '../../eventstore/port.ts';
import { assertOwned, isMember } from '../../http/auth.ts';
import { pageOf, pageQuery } from '../../http/pagination.ts';
import { problemResponses } from '../../http/problem.ts';
import { idParams, str } from '../../http/route-schemas.ts';
import { buildWebhookBody, WebhookBodyTooLargeError } from '../../webhooks/payload.ts';
import type { TestWebhookResult } from '../../webhooks/test-webhook.ts';
import { deliveryStream, toDeliveryEvent } from '../delivery.ts';
import { renderLanding, renderNotFound } from './landing.ts';
import { deliveryView } from './views.ts';

export interface DeliveryRouteDeps {
  store: EventStore;
  testWebhooks(alert: Alert): Promise<TestWebhookResult[]>;
}

const MATCHES_LIMIT = 100;

const matchSchema = { type: 'object', additionalProperties: true } as const;
const alertRef = {
  type: 'object',
  required: ['kind', 'title'],
  properties: { id: str, kind: str, title: str, organization_id: str, project_id: str },
} as const;
export const deliverySchema = {
  $id: 'AlertDelivery',
  type: 'object',
  required: [
    'id',
    'channel',
    'status',
    'created_at',
    'match_count',
    'matches',
    'matches_has_more',
    'has_webhook_payload',
    'viewer_can_manage',
    'alert',
  ],
  properties: {
    id: str,
    alert_id: str,
    monitor_id: { ...str, deprecated: true },
    channel: { type: 'string', enum: ['EMAIL', 'CHAT', 'WEBHOOK'] },
    status: {
      type: 'string',
      enum: ['PENDING', 'SENT', 'FAILED', 'SKIPPED', 'ABANDONED'],
      description: 'PENDING only until the first attempt; FAILED while retrying and after the last attempt.',
    },
    created_at: { type: 'string', format: 'date-time' },
    sent_at: { type: 'string', format: 'date-time' },
    error_message: str,
    next_attempt_at: { type: 'string', format: 'date-time' },
    attempt_count: { type: 'integer' },
    attempts: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          attempt: { type: 'integer' },
          attempted_at: { type: 'string', format: 'date-time' },
          outcome: { type: 'string', enum: ['sent', 'failed'] },
          status_code: { type: 'integer' },
          response: str,
          error: str,
          duration_ms: { type: 'integer' },
          recipients: {
            type: 'array',
            items: {
              type: 'object',
              properties: { email: str, ok: { type: 'boolean' }, response: str, error: str },
            },
          },
        },
      },
    },
    cadence: { type: 'string', enum: ['REALTIME', 'DAILY', 'WEEKLY'] },
    window: { type: 'object', properties: { start: str, end: str } },
    match_count: { type: 'integer', description: 'The true total of matches in the delivery.' },
    matches: { type: 'array', items: matchSchema },
    matches_has_more: { type: 'boolean' },
    matches_cursor: str,
    has_webhook_payload: { type: 'boolean' },
    viewer_can_manage: { type: 'boolean' },
    alert: alertRef,
    monitor: { ...alertRef, deprecated: true },
  },
} as const;

const testResultSchema = {
  type: 'object',
  required: ['results'],
  properties: {
    results: {
      type: 'array',
      items: {
        type: 'object',
        required: ['delivered', 'url', 'webhook_connection_id', 'duration_ms', 'status_code', 'error'],
        properties: {
          delivered: { type: 'boolean' },
          url: { type: ['string', 'null'] },
          webhook_connection_id: str,
          duration_ms: { type: 'integer' },
          status_code: { type: ['integer', 'null'] },
          error: { type: ['string', 'null'] },
        },
      },
    },
  },
} as const;

interface MatchesCursor {
  d: string;
  o: number;
}

/** A position in one alert's deliveries list; `l` names the list so no other list's cursor fits. */
interface DeliveriesCursor {
  l: 'deliveries';
  a: string;
  c: string;
  i: string;
}

export function deliveryRoutes(deps: DeliveryRouteDeps): FastifyPluginAsync {
  return async function routes(app: FastifyInstance) {
    app.addSchema(deliverySchema);
    const delivery = { $ref: 'AlertDelivery#' } as const;

    const ownedAlert = async (request: Parameters<typeof isMember>[0], id: string) => {
      const stored = await findAlert(app.db, id);
      assertOwned(request, stored?.alert.projectId, 'Alert');
      return stored!;
    };

    const matchesAfter = (id: string, cursor: string | undefined) => {
      if (cursor === undefined) return undefined;
      const position = app.cursors.decode<MatchesCursor>(cursor, 'matches_cursor');
      if (position.d !== id || !Number.isInteger(position.o))
        throw new BadRequestError('invalid_cursor', 'The matches_cursor belongs to another delivery.', [
          { location: 'query.matches_cursor', message: 'cursor of another delivery', value: cursor },
        ]);
      return position.o;
    };

    const deliveriesAfter = (alertId: string, cursor: string): DeliveryPosition => {
      const position = app.cursors.decode<Partial<DeliveriesCursor> | null>(cursor);
      if (
        position?.l !== 'deliveries' ||
        position.a !== alertId ||
        typeof position.c !== 'string' ||
        Number.isNaN(Date.parse(position.c)) ||
        typeof position.i !== 'string'
      )
        throw new BadRequestError('invalid_cursor', 'The cursor belongs to another list.', [
          { location: 'query.cursor', message: "not issued for this alert's deliveries", value: cursor },
        ]);
      return { createdAt: position.c, id: position.i };
    };

    app.get<{ Params: { id: string }; Querystring: { limit: number; cursor?: string } }>(
      '/v1/alerts/:id/deliveries',
      {
        schema: {
          tags: ['deliveries'],
          summary: "An alert's deliveries, newest first: the audit log (each match compact)",
          params: idParams,
          querystring: { type: 'object', properties: { ...pageQuery } },
          response: { 200: pageOf(delivery), ...problemResponses(400, 401, 403, 404) },
        },
      },
      async (request) => {
        const alert = await ownedAlert(request, request.params.id);
        const { limit, cursor } = request.query;
        const after = cursor === undefined ? undefined : deliveriesAfter(alert.alert.id, cursor);
        const rows = await listAlertDeliveries(app.db, alert.alert.id, {
          limit: limit + 1,
          ...(after && { after }),
        });
        const shown = rows.slice(0, limit);
        const matches = await deliveryMatches(
          app.db,
          shown.map((row) => row.id),
          { limit: MATCHES_LIMIT + 1, windows: 'none' },
        );
        const data = shown.map((row) => {
          const own = matches.filter((m) => m.deliveryId === row.id);
          const hasMore = own.length > MATCHES_LIMIT || row.match_count > Math.min(own.length, MATCHES_LIMIT);
          const visible = own.slice(0, MATCHES_LIMIT);
          const last = visible.at(-1);
          return deliveryView(row, visible, {
            member: true,
            view: 'compact',
            hasMore,
            cursor: hasMore && last ? app.cursors.encode({ d: row.id, o: last.ordinal }) : undefined,
          });
        });
        const last = shown.at(-1);
        return {
          data,
          has_more: rows.length > limit,
          ...(rows.length > limit &&
            last && {
              cursor: app.cursors.encode({
                l: 'deliveries',
                a: alert.alert.id,
                c: last.created_at.toISOString(),
                i: last.id,
              } satisfies DeliveriesCursor),
            }),
        };
      },
    );

    app.get<{
      Params: { id: string };
      Querystring: { view: 'summary' | 'detailed'; matches_limit: number; matches_cursor?: string };
    }>(
      '/v1/alerts/deliveries/:id',
      {
        config: { auth: 'optional' },
        schema: {
          tags: ['deliveries'],
          summary:
            'One delivery (public by its unguessable id; members of the owning project see everything)',
          params: idParams,
          querystring: {
            type: 'object',
            properties: {
              view: { type: 'string', enum: ['summary', 'detailed'], default: 'summary' },
              matches_limit: { type: 'integer', minimum: 1, maximum: MATCHES_LIMIT, default: MATCHES_LIMIT },
              matches_cursor: { type: 'string', minLength: 1, maxLength: 2048 },
            },
          },
          response: { 200: delivery, ...problemResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const row = await findDelivery(app.db, request.params.id);
        if (!row) throw new NotFoundError('delivery_not_found', 'Delivery not found.');
        const member = isMember(request, row.project_id);
        const { view, matches_limit: limit, matches_cursor: cursor } = request.query;
        const afterOrdinal = matchesAfter(row.id, cursor);
        const fetched = await deliveryMatches(app.db, [row.id], {
          limit: limit + 1,
          windows: member && view === 'detailed' ? 'all' : 'none',
          ...(afterOrdinal !== undefined && { afterOrdinal }),
        });
        const visible = fetched.slice(0, limit);
        const hasMore = fetched.length > limit;
        const last = visible.at(-1);
        return deliveryView(row, visible, {
          member,
          view,
          hasMore,
          cursor: hasMore && last ? app.cursors.encode({ d: row.id, o: last.ordinal }) : undefined,
          ...(member && {
            attempts: await deliveryAttempts(app.db, row.id),
            deliveriesOfMatches: await deliveriesOfMatches(
              app.db,
              visible.map((m) => m.matchId),
            ),
          }),
        });
      },
    );

    app.get<{ Params: { id: string } }>(
      '/v1/alerts/deliveries/:id/webhook-payload',
      {
        config: { auth: 'optional' },
        schema: {
          tags: ['deliveries'],
          summary: 'The exact JSON body a webhook delivery POSTed, rebuilt from its events (members only)',
          params: idParams,
          response: {
            200: {
              description: 'The body, byte for byte as POSTed.',
              content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } },
            },
            ...problemResponses(401, 403, 404),
          },
        },
      },
      async (request, reply) => {
        const row = await findDelivery(app.db, request.params.id);
        if (!row) throw new NotFoundError('delivery_not_found', 'Delivery not found.');
        if (!isMember(request, row.project_id))
          throw new ForbiddenError(
            'not_a_member',
            'Only members of the owning project can read a webhook payload.',
          );
        if (row.channel !== 'WEBHOOK')
          throw new NotFoundError('not_a_webhook_delivery', 'This delivery is not a webhook delivery.');
        if (row.attempts === 0)
          throw new NotFoundError('webhook_payload_not_sent', 'Nothing was POSTed for this delivery.');
        const events = await deps.store.readStream(deliveryStream(row.id), { limit: 1 });
        const first = events[0] && toDeliveryEvent(events[0]);
        const created = first?.type === 'DeliveryCreated' ? first.data : undefined;
        if (!created) throw new NotFoundError('delivery_not_found', 'Delivery not found.');
        const body = await buildWebhookBody(deps.store, created).catch((error: unknown) => {
          if (!(error instanceof WebhookBodyTooLargeError)) throw error;
          throw new NotFoundError(
            'webhook_payload_not_sent',
            `Nothing was POSTed for this delivery: ${error.message}.`,
          );
        });
        return reply.type('application/json').send(Buffer.from(body, 'utf8'));
      },
    );

    app.post<{ Params: { id: string } }>(
      '/v1/alerts/:id/test-webhook',
      {
        schema: {
          tags: ['deliveries'],
          summary: "Send an alert.test body to each of the alert's webhook connections now",
          params: idParams,
          response: { 200: testResultSchema, ...problemResponses(401, 403, 404, 409) },
        },
      },
      async (request) => {
        // From the alert's stream, not the read model: an alert created a moment ago is there.
        const { state } = await loadAlert(deps.store, request.params.id);
        assertOwned(request, state.status === 'initial' ? undefined : state.alert.projectId, 'Alert');
        if (state.status === 'initial' || state.status === 'deleted')
          throw new NotFoundError('not_found', 'Alert not found.');
        return { results: await deps.testWebhooks(state.alert) };
      },
    );

    app.get<{ Params: { id: string }; Querystring: { matches_cursor?: string } }>(
      '/alerts/deliveries/:id',
      {
        config: { auth: 'public' },
        schema: {
          hide: true,
          params: idParams,
          querystring: {
            type: 'object',
            properties: { matches_cursor: { type: 'string', minLength: 1, maxLength: 2048 } },
          },
        },
      },
      async (request, reply) => {
        reply
          .header(
            'content-security-policy',
            "default-src 'none'; img-src https: http:; style-src 'unsafe-inline'",
          )
          .header('referrer-policy', 'no-referrer')
          .header('x-content-type-options', 'nosniff')
          .type('text/html; charset=utf-8');
        const row = await findDelivery(app.db, request.params.id);
        if (!row) return reply.code(404).send(renderNotFound());
        const afterOrdinal = matchesAfter(row.id, request.query.matches_cursor);
        const fetched = await deliveryMatches(app.db, [row.id], {
          limit: MATCHES_LIMIT + 1,
          windows: 'mentions',
          ...(afterOrdinal !== undefined && { afterOrdinal }),
        });
        const visible = fetched.slice(0, MATCHES_LIMIT);
        const last = visible.at(-1);
        const nextPageUrl =
          fetched.length > MATCHES_LIMIT && last
            ? `/alerts/deliveries/${encodeURIComponent(row.id)}?matches_cursor=${encodeURIComponent(
                app.cursors.encode({ d: row.id, o: last.ordinal }),
              )}`
            : undefined;
        return reply.send(renderLanding(row, visible, { nextPageUrl }));
      },
    );
  };
}
