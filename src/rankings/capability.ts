import { chartCapturesProjection } from '../../projections/chart_captures/projection.ts';
import type { Capability } from '../runtime.ts';
import { rankingRoutes } from './routes.ts';

/** Podcast chart rankings: captures, movers and history (docs/catalog-rankings.md). */
export const rankingsCapability: Capability = {
  name: 'rankings',
  routes: [rankingRoutes],
  projections: [chartCapturesProjection],
};
