import type { Config } from '../config.ts';
import type { Db } from '../db/db.ts';
import type { EventStore } from './port.ts';
import { createPostgresEventStore } from './postgres.ts';

/** EventStoreDB when EVENTSTORE_URL is set; otherwise the event store lives in the database. */
export async function openEventStore(config: Pick<Config, 'eventstoreUrl'>, db: Db): Promise<EventStore> {
  if (!config.eventstoreUrl) return createPostgresEventStore(db);
  // Loaded only when used: the gRPC client is heavy and most installations never need it.
  const { createEventStoreDbStore } = await import('./eventstoredb.ts');
  return createEventStoreDbStore(config.eventstoreUrl);
}
