import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Runtime } from '../runtime.ts';
import { parkedCounts } from '../subscriptions/parked.ts';
import type { Projection } from '../subscriptions/projection.ts';
import { httpMetrics } from './http-metrics.ts';
import { type Metrics, metrics as processMetrics } from './metrics.ts';
import { projectionLag } from './projection-lag.ts';

export interface ObservabilityOptions {
  /** The projections whose lag /metrics reports (allProjections of the composition). */
  projections?: readonly Pick<Projection, 'name' | 'eventTypes'>[];
  /** Default: the process's registry. */
  metrics?: Metrics;
}

/**
 * GET /metrics (Prometheus text format, public) and the HTTP latency histogram for every route of
 * the app. An fp plugin, so its onResponse hook reaches the routes of the other capabilities.
 */
export function observabilityRoutes(
  runtime: Pick<Runtime, 'db' | 'store'>,
  options: ObservabilityOptions = {},
) {
  const metrics = options.metrics ?? processMetrics;
  const projections = options.projections ?? [];
  async function plugin(app: FastifyInstance) {
    await app.register(httpMetrics, { metrics });
    const unregister = metrics.registerProjectionLag(() =>
      projectionLag(runtime.db, runtime.store, projections),
    );
    // From the table, so every process reports the same counts.
    const unregisterParked = metrics.registerParkedEvents(() => parkedCounts(runtime.db));
    app.addHook('onClose', async () => {
      unregister();
      unregisterParked();
    });
    app.get('/metrics', { config: { auth: 'public' }, schema: { hide: true } }, async (_request, reply) => {
      const body = await metrics.registry.metrics();
      return reply.type(metrics.registry.contentType).send(body);
    });
  }
  return fp(plugin, { name: 'earshot-observability', fastify: '5.x' });
}
