import { entityMentionsProjection } from '../../projections/entity_mentions/projection.ts';
import type { Capability } from '../runtime.ts';
import type { SearchSlots } from '../search/in-flight.ts';
import { knowledgeRoutes } from './routes.ts';

/**
 * The knowledge graph: people and companies (read from the entities read model) and how many
 * episodes mention each entity (docs/knowledge-graph.md).
 */
export const knowledgeCapability = (inSlot: SearchSlots): Capability => ({
  name: 'knowledge',
  routes: [knowledgeRoutes(inSlot)],
  projections: [entityMentionsProjection],
});
