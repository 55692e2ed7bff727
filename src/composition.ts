import { entitiesProjection } from '../projections/entities/projection.ts';
import { episodesProjection } from '../projections/episodes/projection.ts';
import { entityRoutes } from './entities/routes.ts';
import { ingestionRoutes } from './ingestion/routes.ts';
import type { Capability, Runtime } from './runtime.ts';

/** The one place that wires capabilities together. */
export function buildCapabilities(runtime: Runtime): Capability[] {
  return [
    { name: 'ingestion', routes: [ingestionRoutes(runtime.store)] },
    { name: 'entities', routes: [entityRoutes], projections: [entitiesProjection] },
    { name: 'episodes', projections: [episodesProjection] },
  ];
}

export const allProjections = (capabilities: readonly Capability[]) =>
  capabilities.flatMap((c) => c.projections ?? []);
