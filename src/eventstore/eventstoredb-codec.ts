/**
 * The pure half of the EventStoreDB adapter: positions, expected revisions, filters, event ids and
 * metadata, translated between the port's shapes and the KurrentDB client's.
 */
import { createHash } from 'node:crypto';
import { BadRequestError } from '../errors.ts';
import type { EventMetadata, ExpectedRevision } from './port.ts';

/** A position in `$all` as the KurrentDB client types it. */
export interface LogPosition {
  commit: bigint;
  prepare: bigint;
}

const POSITION = /^(0|[1-9][0-9]*)\/(0|[1-9][0-9]*)$/;

export function encodePosition(position: LogPosition): string {
  return `${position.commit}/${position.prepare}`;
}

/** Parses a position this adapter produced; anything else is a caller bug, reported with the value. */
export function parsePosition(position: string): LogPosition {
  const match = POSITION.exec(position);
  if (!match) {
    throw new BadRequestError(
      'invalid_position',
      `Not an event-store position: ${JSON.stringify(position)}.`,
    );
  }
  return { commit: BigInt(match[1]!), prepare: BigInt(match[2]!) };
}

/** Orders positions as `$all` does: by commit position, then prepare position. */
export function comparePositions(a: LogPosition, b: LogPosition): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1;
  return 0;
}

export function isStart(position: LogPosition): boolean {
  return position.commit === 0n && position.prepare === 0n;
}

export function laterPosition(a: string, b: string): string {
  return comparePositions(parsePosition(a), parsePosition(b)) >= 0 ? a : b;
}

/**
 * Whether a stream whose last event is `actual` (-1: no stream) satisfies the caller's expectation.
 * The adapter checks this itself and always appends with the exact revision it read, so that the
 * duplicate check and the write are one atomic step on the server (see docs/eventstoredb.md).
 */
export function satisfiesExpected(expected: ExpectedRevision, actual: number): boolean {
  switch (expected) {
    case 'any':
      return true;
    case 'no_stream':
      return actual === -1;
    case 'stream_exists':
      return actual >= 0;
    default:
      return actual === expected;
  }
}

/** The client's stream state for "the stream is exactly at `revision`" (-1: it does not exist). */
export function exactStreamState(revision: number): 'no_stream' | bigint {
  return revision < 0 ? 'no_stream' : BigInt(revision);
}

const escapeRegex = (text: string) => text.replace(/[\\^$.*+?()[\]{}|/#\s-]/g, (char) => `\\${char}`);

/**
 * The server-side event-type filter of every `$all` read: system events (`$`-prefixed types, such
 * as `$>` links and `$metadata`) never reach earshot; `eventTypes` narrows further.
 */
export function eventTypeRegex(eventTypes?: readonly string[]): string {
  if (!eventTypes) return '^[^$]';
  const wanted = eventTypes.filter((type) => !type.startsWith('$'));
  if (wanted.length === 0) return '(?!)';
  return `^(?:${[...new Set(wanted)].map(escapeRegex).join('|')})$`;
}

const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Where an event id that is not a canonical UUID is kept (EventStoreDB ids are UUIDs). */
export const EVENT_ID_KEY = 'earshotEventId';
/**
 * A nonce per append call. The server answers a repeated exact-revision append of the same ids
 * with success without writing; the nonce read back tells which call's events were stored.
 */
export const APPEND_ID_KEY = 'earshotAppendId';

/**
 * EventStoreDB requires UUID event ids. A canonical lowercase UUID is used as is; any other id is
 * mapped to a UUID derived from its SHA-256 (RFC 9562 version 8), so the same id always lands on
 * the same UUID, and the original is kept in the metadata.
 */
export function toEventUuid(id: string): string {
  if (CANONICAL_UUID.test(id)) return id;
  const bytes = createHash('sha256').update(`earshot:event-id:${id}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Our metadata as stored: correlation and causation under the keys EventStoreDB's projections read. */
export function toStoredMetadata(
  id: string,
  metadata: EventMetadata | undefined,
  defaults: { correlationId?: string; causationId?: string },
  appendId?: string,
): Record<string, unknown> {
  const { correlationId, causationId, ...rest } = metadata ?? {};
  const stored: Record<string, unknown> = { ...rest };
  const correlation = correlationId ?? defaults.correlationId;
  const causation = causationId ?? defaults.causationId;
  if (correlation !== undefined) stored.$correlationId = correlation;
  if (causation !== undefined) stored.$causationId = causation;
  if (!CANONICAL_UUID.test(id)) stored[EVENT_ID_KEY] = id;
  if (appendId !== undefined) stored[APPEND_ID_KEY] = appendId;
  return stored;
}

/** The stored metadata read back as ours, with the event's original id and its append's nonce. */
export function fromStoredMetadata(
  uuid: string,
  stored: unknown,
): { id: string; metadata: EventMetadata; appendId?: string } {
  if (
    stored === null ||
    typeof stored !== 'object' ||
    Array.isArray(stored) ||
    stored instanceof Uint8Array
  ) {
    return { id: uuid, metadata: {} };
  }
  const {
    $correlationId,
    $causationId,
    [EVENT_ID_KEY]: originalId,
    [APPEND_ID_KEY]: appendId,
    ...rest
  } = stored as Record<string, unknown>;
  const metadata: EventMetadata = { ...rest };
  if (typeof $correlationId === 'string') metadata.correlationId = $correlationId;
  if (typeof $causationId === 'string') metadata.causationId = $causationId;
  return {
    id: typeof originalId === 'string' ? originalId : uuid,
    metadata,
    ...(typeof appendId === 'string' ? { appendId } : {}),
  };
}

/**
 * `esdb://` and `esdb+discover://` still work with the KurrentDB client but log a deprecation
 * warning on every connection; they are rewritten to the `kurrentdb` schemes, which mean the same.
 */
export function normalizeConnectionString(url: string): string {
  const match = /^(esdb|eventstore)(\+discover)?:\/\//i.exec(url);
  return match ? `kurrentdb${match[2] ?? ''}://${url.slice(match[0].length)}` : url;
}

/** The connection string without credentials, for error messages. */
export function redactConnectionString(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}
