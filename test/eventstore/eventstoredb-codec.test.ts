import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../src/errors.ts';
import {
  APPEND_ID_KEY,
  EVENT_ID_KEY,
  encodePosition,
  eventTypeRegex,
  exactStreamState,
  fromStoredMetadata,
  isStart,
  normalizeConnectionString,
  redactConnectionString,
  satisfiesExpected,
  toEventUuid,
  toLogPosition,
  toStoredMetadata,
} from '../../src/eventstore/eventstoredb-codec.ts';
import { comparePositions, laterPosition, START } from '../../src/eventstore/port.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const u64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });

describe('EventStoreDB positions', () => {
  it('encodes a log position as "<commit>/<prepare>" and START as its zero position', () => {
    expect(encodePosition({ commit: 1234n, prepare: 1200n })).toBe('1234/1200');
    expect(toLogPosition(START)).toEqual({ commit: 0n, prepare: 0n });
    expect(isStart(toLogPosition(START))).toBe(true);
    expect(isStart(toLogPosition('0/1'))).toBe(false);
  });

  it('parses back every position it encodes, beyond 2^53', () => {
    fc.assert(
      fc.property(u64, u64, (commit, prepare) => {
        expect(toLogPosition(encodePosition({ commit, prepare }))).toEqual({ commit, prepare });
      }),
    );
  });

  it('orders positions by commit, then prepare, as $all does, which plain string order does not', () => {
    fc.assert(
      fc.property(u64, u64, u64, u64, (c1, p1, c2, p2) => {
        const expected = c1 === c2 ? Math.sign(Number(p1 - p2)) : c1 < c2 ? -1 : 1;
        expect(
          comparePositions(
            encodePosition({ commit: c1, prepare: p1 }),
            encodePosition({ commit: c2, prepare: p2 }),
          ),
        ).toBe(expected);
      }),
    );
    expect(laterPosition('9/9', '10/0')).toBe('10/0');
    expect(laterPosition('10/5', '10/12')).toBe('10/12');
    expect(laterPosition('7/7', '7/7')).toBe('7/7');
  });

  it('rejects a position it did not make with a 400 naming the value', () => {
    for (const bad of ['', '12', '1/2/3', '-1/0', '01/2', 'a/b', '1/ 2']) {
      const error = (() => {
        try {
          toLogPosition(bad);
        } catch (caught) {
          return caught;
        }
      })();
      expect(error).toBeInstanceOf(BadRequestError);
      expect(error).toMatchObject({ errorCode: 'invalid_position', status: 400 });
    }
  });
});

describe('EventStoreDB expected revisions', () => {
  it.each([
    ['any', -1, true],
    ['any', 4, true],
    ['no_stream', -1, true],
    ['no_stream', 0, false],
    ['stream_exists', -1, false],
    ['stream_exists', 0, true],
    [3, 3, true],
    [3, 2, false],
    [3, -1, false],
    [-1, -1, true],
    [-1, 0, false],
  ] as const)('checks expected %s against a stream at revision %s: %s', (expected, actual, ok) => {
    expect(satisfiesExpected(expected, actual)).toBe(ok);
  });

  it("appends with the client's NO_STREAM for a missing stream and the exact bigint revision otherwise", () => {
    expect(exactStreamState(-1)).toBe('no_stream');
    expect(exactStreamState(0)).toBe(0n);
    expect(exactStreamState(41)).toBe(41n);
  });
});

describe('EventStoreDB event-type filter', () => {
  // The server evaluates these with .NET regular expressions; the constructs used (anchors,
  // alternation, a character class, an empty negative lookahead) mean the same in JavaScript.
  const matches = (regex: string, type: string) => new RegExp(regex).test(type);

  it('excludes system events ($-prefixed types) when no types are asked for', () => {
    const regex = eventTypeRegex();
    expect(matches(regex, 'AlertCreated')).toBe(true);
    for (const system of ['$>', '$metadata', '$streamCreated', '$@', '$ProjectionUpdated']) {
      expect(matches(regex, system)).toBe(false);
    }
  });

  it('matches exactly the asked types, not their prefixes or suffixes', () => {
    const regex = eventTypeRegex(['AlertCreated', 'AlertPaused']);
    expect(matches(regex, 'AlertCreated')).toBe(true);
    expect(matches(regex, 'AlertPaused')).toBe(true);
    expect(matches(regex, 'AlertCreatedV2')).toBe(false);
    expect(matches(regex, 'OldAlertCreated')).toBe(false);
    expect(matches(regex, 'AlertDeleted')).toBe(false);
  });

  it('escapes regex characters in type names and never lets a system type through', () => {
    const regex = eventTypeRegex(['episode.transcribed', 'a+b', '$metadata']);
    expect(matches(regex, 'episode.transcribed')).toBe(true);
    expect(matches(regex, 'episodeXtranscribed')).toBe(false);
    expect(matches(regex, 'a+b')).toBe(true);
    expect(matches(regex, 'aab')).toBe(false);
    expect(matches(regex, '$metadata')).toBe(false);
    expect(matches(eventTypeRegex(['$metadata']), '$metadata')).toBe(false);
  });
});

describe('EventStoreDB event ids', () => {
  it('uses a canonical UUID as the server event id unchanged', () => {
    const id = '0b1f0c5e-6a4e-4d7a-9d1f-0c5e6a4e4d7a';
    expect(toEventUuid(id)).toBe(id);
  });

  it('maps any other id to the same valid UUID every time, and different ids to different UUIDs', () => {
    const a = toEventUuid('ingest:episode-42:transcribed');
    expect(a).toMatch(UUID);
    expect(a[14]).toBe('8');
    expect(toEventUuid('ingest:episode-42:transcribed')).toBe(a);
    expect(toEventUuid('ingest:episode-43:transcribed')).not.toBe(a);
    expect(toEventUuid('0B1F0C5E-6A4E-4D7A-9D1F-0C5E6A4E4D7A')).toMatch(UUID);
  });
});

describe('EventStoreDB metadata', () => {
  it("stores correlation and causation under EventStoreDB's $correlationId and $causationId", () => {
    const stored = toStoredMetadata(
      '0b1f0c5e-6a4e-4d7a-9d1f-0c5e6a4e4d7a',
      { source: 'api' },
      { correlationId: 'req-1', causationId: 'cmd-1' },
    );
    expect(stored).toEqual({ source: 'api', $correlationId: 'req-1', $causationId: 'cmd-1' });
  });

  it("lets an event's own correlation and causation win over the append's", () => {
    const stored = toStoredMetadata(
      '0b1f0c5e-6a4e-4d7a-9d1f-0c5e6a4e4d7a',
      { correlationId: 'own', causationId: 'own-cause' },
      { correlationId: 'req-1', causationId: 'cmd-1' },
    );
    expect(stored).toEqual({ $correlationId: 'own', $causationId: 'own-cause' });
  });

  it('reads stored metadata back as ours, with the original id and without internal keys', () => {
    const id = 'ingest:episode-42:transcribed';
    const uuid = toEventUuid(id);
    const stored = toStoredMetadata(id, { source: 'kafka' }, { correlationId: 'c' }, 'append-1');
    expect(stored[EVENT_ID_KEY]).toBe(id);
    expect(stored[APPEND_ID_KEY]).toBe('append-1');
    const read = fromStoredMetadata(uuid, JSON.parse(JSON.stringify(stored)));
    expect(read).toEqual({ id, metadata: { source: 'kafka', correlationId: 'c' }, appendId: 'append-1' });
  });

  it('reads events written by other tools (no metadata, binary metadata) with empty metadata', () => {
    const uuid = '0b1f0c5e-6a4e-4d7a-9d1f-0c5e6a4e4d7a';
    expect(fromStoredMetadata(uuid, undefined)).toEqual({ id: uuid, metadata: {} });
    expect(fromStoredMetadata(uuid, new Uint8Array([1, 2]))).toEqual({ id: uuid, metadata: {} });
    expect(fromStoredMetadata(uuid, 'text')).toEqual({ id: uuid, metadata: {} });
  });
});

describe('EventStoreDB connection strings', () => {
  it('rewrites the deprecated esdb schemes to kurrentdb and leaves kurrentdb ones alone', () => {
    expect(normalizeConnectionString('esdb://localhost:2113?tls=false')).toBe(
      'kurrentdb://localhost:2113?tls=false',
    );
    expect(normalizeConnectionString('esdb+discover://a:2113,b:2113')).toBe(
      'kurrentdb+discover://a:2113,b:2113',
    );
    expect(normalizeConnectionString('kurrentdb://admin:changeit@db:2113')).toBe(
      'kurrentdb://admin:changeit@db:2113',
    );
  });

  it('hides credentials in what it reports', () => {
    expect(redactConnectionString('kurrentdb://admin:changeit@db:2113?tls=false')).toBe(
      'kurrentdb://***@db:2113?tls=false',
    );
    expect(redactConnectionString('kurrentdb://db:2113')).toBe('kurrentdb://db:2113');
  });
});
