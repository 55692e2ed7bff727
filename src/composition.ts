import { deliveriesOfMatch } from '../projections/deliveries/queries.ts';
import { entitiesProjection } from '../projections/entities/projection.ts';
import { episodesProjection } from '../projections/episodes/projection.ts';
import { advertisingCapability } from './advertising/capability.ts';
import { advertisingPodcastExtras } from './advertising/podcast-extras.ts';
import { agentsCapability } from './agents/capability.ts';
import { alertsCapability } from './alerts/capability.ts';
import { catalogCapability } from './catalog/capability.ts';
import { listChannels } from './chat/channels.ts';
import { deliveryCapability } from './delivery/capability.ts';
import { entityRoutes } from './entities/routes.ts';
import { ingestionRoutes } from './ingestion/routes.ts';
import { kafkaIngestionWorker } from './kafka/ingestion-worker.ts';
import { knowledgeCapability } from './knowledge/capability.ts';
import { matchingCapability } from './matching/capability.ts';
import { observabilityRoutes } from './observability/routes.ts';
import { paymentsCapability } from './payments/capability.ts';
import { rankingsCapability } from './rankings/capability.ts';
import type { Capability, Runtime } from './runtime.ts';
import { embeddingProvider, searchCapability } from './search/capability.ts';
import { searchesInFlight } from './search/in-flight.ts';

/** The one place that wires capabilities together. */
export function buildCapabilities(runtime: Runtime): Capability[] {
  const slack = { slackApiUrl: runtime.config.slackApiUrl };
  // One caller's searches of every surface share its slots (docs/search.md, "Searches in flight").
  const inSlot = searchesInFlight(runtime.config.searchProjectConcurrency);
  const capabilities: Capability[] = [
    // First: its hooks must reach the routes of every capability after it.
    paymentsCapability(runtime),
    {
      name: 'ingestion',
      routes: [ingestionRoutes(runtime.store, runtime.now)],
      workers: runtime.config.kafkaBrokers ? [kafkaIngestionWorker(runtime)] : [],
    },
    { name: 'entities', routes: [entityRoutes(inSlot)], projections: [entitiesProjection] },
    { name: 'episodes', projections: [episodesProjection] },
    knowledgeCapability(inSlot),
    rankingsCapability,
    alertsCapability(runtime, {
      listChannels: async ({ botToken }) =>
        (await listChannels(botToken, slack)).map((c) => ({
          id: c.id,
          name: c.name,
          is_private: c.isPrivate,
        })),
    }),
    deliveryCapability(runtime),
    matchingCapability(runtime, { deliveriesOfMatch }),
    catalogCapability({
      now: () => runtime.now(),
      inSlot,
      podcastExtras: advertisingPodcastExtras,
      cacheBytes: runtime.config.catalogCacheMb * 2 ** 20,
      transcriptsBytes: runtime.config.catalogTranscriptsMb * 2 ** 20,
      itemsBytes: runtime.config.catalogItemsMb * 2 ** 20,
      listBytes: runtime.config.catalogListMb * 2 ** 20,
    }),
    searchCapability(
      {
        now: () => runtime.now(),
        statementTimeoutMs: runtime.config.searchStatementTimeoutMs,
        inSlot,
      },
      runtime.config.semanticSearch ? { runtime, provider: embeddingProvider(runtime.config) } : undefined,
    ),
    advertisingCapability(runtime),
    agentsCapability(runtime),
  ];
  const observability = observabilityRoutes(runtime, { projections: allProjections(capabilities) });
  return [...capabilities, { name: 'observability', routes: [observability] }];
}

export const allProjections = (capabilities: readonly Capability[]) =>
  capabilities.flatMap((c) => c.projections ?? []);
