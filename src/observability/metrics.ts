import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** How an event reached ingestion: the REST endpoint, a Kafka topic, or `earshot ingest FILE`. */
export type IngestTransport = 'http' | 'kafka' | 'file';
/**
 * delivered: the receiver took it. retry_scheduled: a retryable failure, another attempt is due.
 * abandoned: the retry budget is spent or the failure is permanent. skipped: nothing was sent on
 * purpose (alert paused, connection revoked, address unverified).
 */
export type DeliveryOutcome = 'delivered' | 'retry_scheduled' | 'failed' | 'abandoned' | 'skipped';

/** A reading taken at scrape time; return undefined when there is nothing to report. */
export type GaugeSource<T> = () => Promise<T | undefined> | T | undefined;

export interface Metrics {
  registry: Registry;
  ingestEvents: Counter<'result' | 'transport'>;
  /** Seconds between an episode event being recorded and the matcher finishing it (last finished event). */
  matcherLagSeconds: Gauge;
  /** Episode events recorded but not yet matched, as of the matcher's last read. */
  matcherLagEvents: Gauge;
  /** Events of a projection's types after its checkpoint; computed at scrape time. */
  projectionLagEvents: Gauge<'projection'>;
  /** Events parked by each subscription (projection or consumer); read at scrape time. */
  parkedEvents: Gauge<'subscription'>;
  deliveries: Counter<'channel' | 'outcome'>;
  /** Delivery attempts that threw instead of recording an outcome (docs/delivery.md, Crashed attempts). */
  deliveryCrashes: Counter;
  /** Deliveries waiting for a retry; read at scrape time from the source the delivery capability registers. */
  deliveryRetryQueueDepth: Gauge;
  httpRequestDuration: Histogram<'method' | 'route' | 'status'>;
  /** x402 payments by outcome: verified, settled, settlement_failed, not_charged, refused, replayed. */
  payments: Counter<'outcome'>;
  /** Adds a source of the retry queue depth; returns its removal. Several sources are summed. */
  registerRetryQueueDepth(source: GaugeSource<number>): () => void;
  /** Adds a source of per-projection lag; returns its removal. A later source wins for the same projection. */
  registerProjectionLag(source: GaugeSource<ReadonlyMap<string, number>>): () => void;
  /** Adds a source of parked events per subscription; returns its removal. A later source wins. */
  registerParkedEvents(source: GaugeSource<ReadonlyMap<string, number>>): () => void;
}

export const HTTP_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A fresh registry with every earshot metric and Node's default process metrics. */
export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const retrySources = new Set<GaugeSource<number>>();
  const lagSources = new Set<GaugeSource<ReadonlyMap<string, number>>>();
  const parkedSources = new Set<GaugeSource<ReadonlyMap<string, number>>>();
  const registers = [registry];

  const metrics: Metrics = {
    registry,
    ingestEvents: new Counter({
      name: 'earshot_ingest_events_total',
      help: 'Ingestion events by result (accepted, duplicate, rejected) and transport (http, kafka, file).',
      labelNames: ['result', 'transport'],
      registers,
    }),
    matcherLagSeconds: new Gauge({
      name: 'earshot_matcher_lag_seconds',
      help: 'Seconds from an episode event being recorded to the matcher finishing it, for the last event finished.',
      registers,
    }),
    matcherLagEvents: new Gauge({
      name: 'earshot_matcher_lag_events',
      help: 'Episode events recorded but not yet matched, as of the last read of the matcher.',
      registers,
    }),
    projectionLagEvents: new Gauge({
      name: 'earshot_projection_lag_events',
      help: "Events of a projection's types recorded after its checkpoint (read at scrape time).",
      labelNames: ['projection'],
      registers,
      async collect() {
        this.reset();
        const merged = new Map<string, number>();
        for (const source of lagSources) {
          for (const [projection, lag] of (await source()) ?? []) merged.set(projection, lag);
        }
        for (const [projection, lag] of merged) this.set({ projection }, lag);
      },
    }),
    parkedEvents: new Gauge({
      name: 'earshot_parked_events',
      help: 'Events a subscription (projection or consumer) parked after its handler kept failing on them (read at scrape time).',
      labelNames: ['subscription'],
      registers,
      async collect() {
        this.reset();
        const merged = new Map<string, number>();
        for (const source of parkedSources) {
          // A source that cannot read now (database down) leaves the others' figures standing.
          const counts = await Promise.resolve()
            .then(source)
            .catch(() => undefined);
          for (const [subscription, count] of counts ?? []) merged.set(subscription, count);
        }
        for (const [subscription, count] of merged) this.set({ subscription }, count);
      },
    }),
    deliveries: new Counter({
      name: 'earshot_deliveries_total',
      help: 'Delivery attempts by channel (email, chat, webhook) and outcome (delivered, retry_scheduled, abandoned, skipped).',
      labelNames: ['channel', 'outcome'],
      registers,
    }),
    deliveryCrashes: new Counter({
      name: 'earshot_delivery_crashes_total',
      help: 'Delivery attempts that crashed (threw instead of recording an outcome) and were retried later or ended.',
      registers,
    }),
    deliveryRetryQueueDepth: new Gauge({
      name: 'earshot_delivery_retry_queue_depth',
      help: 'Deliveries waiting for a retry (read at scrape time).',
      registers,
      async collect() {
        let depth = 0;
        for (const source of retrySources) depth += (await source()) ?? 0;
        this.set(depth);
      },
    }),
    httpRequestDuration: new Histogram({
      name: 'earshot_http_request_duration_seconds',
      help: 'HTTP request duration by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status'],
      buckets: HTTP_DURATION_BUCKETS,
      registers,
    }),
    payments: new Counter({
      name: 'earshot_payments_total',
      help: 'x402 payments by outcome (verified, settled, settlement_failed, not_charged, refused, replayed).',
      labelNames: ['outcome'],
      registers,
    }),
    registerRetryQueueDepth(source) {
      retrySources.add(source);
      return () => retrySources.delete(source);
    },
    registerProjectionLag(source) {
      lagSources.add(source);
      return () => lagSources.delete(source);
    },
    registerParkedEvents(source) {
      parkedSources.add(source);
      return () => parkedSources.delete(source);
    },
  };
  return metrics;
}

/**
 * The process's metrics, which every capability increments: one registry per process, so the
 * api's /metrics and a worker's ops server show the same numbers.
 */
export const metrics: Metrics = createMetrics();
