import { searchPassagesProjection } from '../../projections/search-passages/projection.ts';
import type { Capability } from '../runtime.ts';
import { searchRoutes } from './routes.ts';

/** Dialogue search and entity mentions over every transcript (docs/search.md). */
export function searchCapability(deps: { now(): Date }): Capability {
  return { name: 'search', routes: [searchRoutes(deps)], projections: [searchPassagesProjection] };
}
