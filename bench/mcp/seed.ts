import type { IngestEvent } from '../../src/ingestion/events.ts';

/** What the MCP benches read: one company for entity_resolve and one show for podcast_get. */
export function benchCatalog(occurredAt: string): IngestEvent[] {
  return [
    {
      type: 'entity.upserted',
      event_id: 'bench-entity',
      occurred_at: occurredAt,
      entity: { id: 'ent-bench', slug: 'bench-co', name: 'Bench Company', entity_type: 'COMPANY' },
    },
    {
      type: 'podcast.upserted',
      event_id: 'bench-podcast',
      occurred_at: occurredAt,
      podcast: { id: 'pod-bench', title: 'The Bench Show', slug: 'the-bench-show' },
    },
  ];
}
