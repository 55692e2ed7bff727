import type { FastifyInstance } from 'fastify';
import { type ErrorDetail, ValidationError } from '../errors.ts';
import type { EventStore } from '../eventstore/port.ts';
import { problemResponses } from '../http/problem.ts';
import { metrics } from '../observability/metrics.ts';
import type { IngestEvent } from './events.ts';
import { ingestEvents } from './ingest.ts';
import { validateEvent } from './validate.ts';

export const MAX_BATCH = 500;

/** POST /v1/ingest/events: the embedded ingestion entry, for ingest keys. */
export function ingestionRoutes(store: EventStore, now: () => Date = () => new Date()) {
  return async function routes(app: FastifyInstance) {
    app.post<{ Body: { events: unknown[] } }>(
      '/v1/ingest/events',
      {
        config: { auth: 'ingest' },
        schema: {
          tags: ['ingestion'],
          summary: 'Ingest producer events (entity.upserted, episode.transcribed, podcast.upserted)',
          body: {
            type: 'object',
            required: ['events'],
            additionalProperties: false,
            properties: {
              events: { type: 'array', minItems: 1, maxItems: MAX_BATCH, items: { type: 'object' } },
            },
          },
          response: {
            202: {
              type: 'object',
              required: ['accepted', 'duplicates'],
              properties: { accepted: { type: 'integer' }, duplicates: { type: 'integer' } },
            },
            ...problemResponses(401, 403, 413, 422),
          },
        },
      },
      async (request, reply) => {
        const { events } = request.body;
        const clock = now();
        const errors: ErrorDetail[] = events.flatMap((event, i) =>
          validateEvent(event, `/events/${i}`, clock),
        );
        if (errors.length > 0) {
          metrics.ingestEvents.inc({ result: 'rejected', transport: 'http' }, events.length);
          throw new ValidationError(
            'invalid_events',
            `The batch was rejected: ${errors.length} problem(s).`,
            errors,
          );
        }
        const result = await ingestEvents(store, events as IngestEvent[]);
        return reply.code(202).send(result);
      },
    );
  };
}
