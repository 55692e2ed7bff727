import { adFactsProjection } from '../../projections/ad-leaderboard/projection.ts';
import { podcastLinksProjection } from '../../projections/podcast-links/projection.ts';
import type { Capability, Runtime } from '../runtime.ts';
import { Leaderboard } from './leaderboard.ts';
import { leaderboardRoutes } from './leaderboard-routes.ts';
import { advertisingRoutes } from './presence-routes.ts';
import { recommendationRoutes } from './recommendation-routes.ts';
import { parseSnapshotInterval, snapshotWorker } from './snapshot-worker.ts';

/**
 * Advertising and recommendations (docs/advertising.md): the sponsor leaderboard and its snapshot
 * worker, ad timeseries and presence, related shows and episodes, guest, sponsor and show
 * recommendations.
 */
export function advertisingCapability(runtime: Pick<Runtime, 'now'> & Partial<Runtime>): Capability {
  const leaderboard = new Leaderboard(() => runtime.now());
  return {
    name: 'advertising',
    routes: [leaderboardRoutes(leaderboard), advertisingRoutes(() => runtime.now()), recommendationRoutes],
    projections: [adFactsProjection, podcastLinksProjection],
    workers: runtime.db
      ? [
          snapshotWorker(
            runtime as Runtime,
            'projector',
            parseSnapshotInterval(runtime.config?.snapshotInterval),
          ),
        ]
      : [],
  };
}
