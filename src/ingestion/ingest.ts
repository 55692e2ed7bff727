import type { EventStore } from '../eventstore/port.ts';
import { type IngestTransport, metrics } from '../observability/metrics.ts';
import { type IngestEvent, STORED_TYPE, storedEventId, streamOf } from './events.ts';

export interface IngestResult {
  accepted: number;
  duplicates: number;
}

/**
 * Appends valid producer events to their streams. Each producer event is its own append, so a
 * redelivered event_id is a no-op and counted as a duplicate. The stored event's id is also its
 * correlation id: every event caused by it downstream (matches, deliveries) carries it.
 */
export async function ingestEvents(
  store: EventStore,
  events: readonly IngestEvent[],
  transport: IngestTransport = 'http',
): Promise<IngestResult> {
  const result: IngestResult = { accepted: 0, duplicates: 0 };
  for (const event of events) {
    const id = storedEventId(event.event_id);
    const appended = await store.append(
      streamOf(event),
      [{ id, type: STORED_TYPE[event.type], data: event }],
      {
        correlationId: id,
      },
    );
    if (appended.duplicate) result.duplicates++;
    else result.accepted++;
    metrics.ingestEvents.inc({ result: appended.duplicate ? 'duplicate' : 'accepted', transport });
  }
  return result;
}
