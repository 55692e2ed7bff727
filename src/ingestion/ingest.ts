import type { AppendRequest, AppendResult, EventStore } from '../eventstore/port.ts';
import { type IngestTransport, metrics } from '../observability/metrics.ts';
import { type IngestEvent, STORED_TYPE, storedEventId, streamOf } from './events.ts';

export interface IngestResult {
  accepted: number;
  duplicates: number;
}

/**
 * Appends valid producer events to their streams, in order. Each producer event is its own append,
 * so a redelivered event_id is a no-op and counted as a duplicate; a batch is one `appendMany`
 * (one round trip on PostgreSQL), and an event_id repeated within it counts as a duplicate of its
 * first occurrence. The stored event's id is also its correlation id: every event caused by it
 * downstream (matches, deliveries) carries it.
 */
export async function ingestEvents(
  store: EventStore,
  events: readonly IngestEvent[],
  transport: IngestTransport = 'http',
): Promise<IngestResult> {
  const appends: AppendRequest[] = [];
  const ids = new Set<string>();
  // Index of each event's append; -1 for a repeat of an earlier event of the batch.
  const appendOf = events.map((event) => {
    const id = storedEventId(event.event_id);
    if (ids.has(id)) return -1;
    ids.add(id);
    appends.push({
      streamId: streamOf(event),
      events: [{ id, type: STORED_TYPE[event.type], data: event }],
      options: { correlationId: id },
    });
    return appends.length - 1;
  });
  // A single event (the Kafka worker's unit) takes the plain append.
  const results: AppendResult[] =
    appends.length === 1
      ? [await store.append(appends[0]!.streamId, appends[0]!.events, appends[0]!.options)]
      : await store.appendMany(appends);

  const result: IngestResult = { accepted: 0, duplicates: 0 };
  for (const index of appendOf) {
    const duplicate = index < 0 || results[index]!.duplicate;
    if (duplicate) result.duplicates++;
    else result.accepted++;
    metrics.ingestEvents.inc({ result: duplicate ? 'duplicate' : 'accepted', transport });
  }
  return result;
}
