import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Metrics } from './metrics.ts';

/** The route label of a request that matched no route, so stray URLs cannot blow up the label set. */
export const UNMATCHED_ROUTE = 'unmatched';

async function httpMetricsPlugin(app: FastifyInstance, options: { metrics: Metrics }) {
  const histogram = options.metrics.httpRequestDuration;
  app.addHook('onResponse', async (request, reply) => {
    // The route pattern (/v1/alerts/:id), never the raw URL: one series per route, not per id.
    const route = request.is404 ? UNMATCHED_ROUTE : (request.routeOptions.url ?? UNMATCHED_ROUTE);
    histogram.observe(
      { method: request.method, route, status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
}

/** Times every request of the app it is registered on (an fp plugin: the hook is not encapsulated). */
export const httpMetrics = fp(httpMetricsPlugin, { name: 'earshot-http-metrics', fastify: '5.x' });
