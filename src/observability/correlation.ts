import type { Logger } from 'pino';
import type { AppendOptions, EventMetadata, RecordedEvent } from '../eventstore/port.ts';

/**
 * A child logger carrying the event's correlationId and causationId, so every line a consumer
 * logs about an episode can be found from the ingestion event down to each delivery.
 */
export function withCorrelation(
  log: Logger,
  metadata: EventMetadata | undefined,
  bindings: Record<string, unknown> = {},
): Logger {
  const ids: Record<string, unknown> = {};
  if (typeof metadata?.correlationId === 'string') ids.correlationId = metadata.correlationId;
  if (typeof metadata?.causationId === 'string') ids.causationId = metadata.causationId;
  return log.child({ ...ids, ...bindings });
}

/**
 * The append options for events caused by `cause`: the correlation id is carried on unchanged
 * (the ingestion event's id starts it), the causation id names the event that caused these.
 */
export function causedBy(
  cause: Pick<RecordedEvent, 'id' | 'metadata'>,
): Required<Pick<AppendOptions, 'correlationId' | 'causationId'>> {
  const correlationId =
    typeof cause.metadata.correlationId === 'string' ? cause.metadata.correlationId : cause.id;
  return { correlationId, causationId: cause.id };
}
