import { backfill } from '../../consumers/matcher/backfill.ts';
import { realtimeMatcher } from '../../consumers/matcher/realtime.ts';
import { summarizer } from '../../consumers/summarizer/summarizer.ts';
import { matchesProjection } from '../../projections/matches/projection.ts';
import type { Db } from '../db/db.ts';
import type { Capability, Runtime, Worker } from '../runtime.ts';
import { type Consumer, consumerSubscriber, runConsumer } from '../subscriptions/consumer.ts';
import type { MatchDelivery } from './http/match-resource.ts';
import { matchingRoutes } from './http/routes.ts';
import { PreviewService } from './previews/preview.ts';
import { runPreviewSweeper } from './previews/sweeper.ts';
import { extractiveSummaryProvider, type SummaryProvider } from './summary.ts';

export interface MatchingOptions {
  /** The delivery pipeline's deliveries of a match, shown on GET /v1/alerts/matches/{id}. */
  deliveriesOfMatch?: (db: Db, matchId: string) => Promise<MatchDelivery[]>;
  /** Default: the built-in extractive provider (no network). */
  summaryProvider?: SummaryProvider;
}

/** A consumer run as a worker of the matcher role. */
export function consumerWorker(runtime: Runtime, consumer: Consumer): Worker {
  const log = runtime.log.child({ consumer: consumer.name });
  return {
    name: `consumer:${consumer.name}`,
    role: 'matcher',
    subscriber: consumerSubscriber(consumer),
    run: (signal) =>
      runConsumer(runtime.db, runtime.store, consumer, {
        signal,
        log,
        onError: (error) => log.error({ err: error }, 'consumer attempt failed; retrying'),
      }),
  };
}

/**
 * Matching: the realtime matcher, the creation-time backfill, the summarizer and the preview
 * sweeper (role matcher); the matches read model; the match and preview endpoints.
 */
export function matchingCapability(runtime: Runtime, options: MatchingOptions = {}): Capability {
  const { db, store, log } = runtime;
  const now = () => runtime.now();
  const previews = new PreviewService({
    db,
    log: log.child({ component: 'previews' }),
    now,
    limits: runtime.config.previewLimits,
  });
  return {
    name: 'matching',
    routes: [
      matchingRoutes({
        store,
        previews,
        ...(options.deliveriesOfMatch ? { deliveriesOfMatch: options.deliveriesOfMatch } : {}),
      }),
    ],
    projections: [matchesProjection],
    workers: [
      consumerWorker(runtime, realtimeMatcher({ db, store, log, now })),
      consumerWorker(runtime, backfill({ db, store, log, now })),
      consumerWorker(
        runtime,
        summarizer({ db, store, log, now, provider: options.summaryProvider ?? extractiveSummaryProvider }),
      ),
      {
        name: 'previews',
        role: 'matcher',
        run: (signal) => runPreviewSweeper(previews, { signal, log: log.child({ component: 'previews' }) }),
      },
    ],
  };
}
