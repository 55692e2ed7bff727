import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConflictError, WrongExpectedRevisionError } from '../../src/errors.ts';
import {
  appendIdempotently,
  StreamIdIndex,
  type StreamLog,
} from '../../src/eventstore/eventstoredb-idempotence.ts';

/**
 * A stand-in for the one server guarantee the protocol relies on: an append with an exact
 * expected revision succeeds only if the stream is at that revision. No EventStoreDB server can
 * run here (docs/eventstoredb.md); these tests check the protocol built on that guarantee, the
 * contract suite in eventstoredb.test.ts checks the adapter against a real server.
 */
class ExactRevisionLog implements StreamLog {
  readonly streams = new Map<string, string[]>();
  reads = 0;
  /** Awaited before each operation, so tests can interleave concurrent appends. */
  pause: () => Promise<void> = () => Promise.resolve();
  /** When set, the next append is stored but its acknowledgement is lost (a timeout, a crash). */
  loseNextAck = false;

  async readIds(streamId: string, fromRevision: number) {
    await this.pause();
    this.reads += 1;
    const ids = this.streams.get(streamId);
    if (!ids) return { ids: [], lastRevision: -1 };
    return {
      ids: ids.slice(fromRevision).map((uuid, i) => ({ uuid, revision: fromRevision + i })),
      lastRevision: ids.length - 1,
    };
  }

  async appendExact<E extends { uuid: string }>(streamId: string, events: readonly E[], exact: number) {
    await this.pause();
    const ids = this.streams.get(streamId) ?? [];
    if (ids.length - 1 !== exact) return { ok: false as const };
    this.streams.set(streamId, [...ids, ...events.map((event) => event.uuid)]);
    if (this.loseNextAck) {
      this.loseNextAck = false;
      throw new Error('deadline exceeded');
    }
    return { ok: true as const, nextRevision: ids.length + events.length - 1 };
  }
}

const ids = (...names: string[]) => names.map((uuid) => ({ uuid }));
const append = (
  log: StreamLog,
  index: StreamIdIndex,
  events: { uuid: string }[],
  expected: Parameters<typeof appendIdempotently>[4]['expected'] = 'any',
) => appendIdempotently(log, index, 'alert-1', events, { expected, maxAttempts: 10 });

describe('idempotent append on EventStoreDB', () => {
  it('appends new events with the exact revision it read', async () => {
    const log = new ExactRevisionLog();
    const index = new StreamIdIndex(100);
    expect(await append(log, index, ids('a', 'b'), 'no_stream')).toEqual({
      nextRevision: 1,
      duplicate: false,
      lastRevision: 1,
    });
    expect(await append(log, index, ids('c'), 1)).toMatchObject({ nextRevision: 2, duplicate: false });
    expect(log.streams.get('alert-1')).toEqual(['a', 'b', 'c']);
  });

  it('makes a repeated append a no-op reporting the revision of the stored events', async () => {
    const log = new ExactRevisionLog();
    const index = new StreamIdIndex(100);
    await append(log, index, ids('a', 'b'));
    await append(log, index, ids('c'));
    expect(await append(log, index, ids('a', 'b'), 'no_stream')).toEqual({
      nextRevision: 1,
      duplicate: true,
      lastRevision: 1,
    });
    expect(log.streams.get('alert-1')).toEqual(['a', 'b', 'c']);
  });

  it('recognises a duplicate another process wrote, whatever this process remembers', async () => {
    const log = new ExactRevisionLog();
    await append(log, new StreamIdIndex(100), ids('a'));
    const otherProcess = new StreamIdIndex(100);
    expect(await append(log, otherProcess, ids('a'))).toMatchObject({ duplicate: true });
    expect(await append(log, new StreamIdIndex(0), ids('a'))).toMatchObject({ duplicate: true });
    expect(log.streams.get('alert-1')).toEqual(['a']);
  });

  it('stores the events once when the acknowledgement of the first attempt was lost and the caller retries', async () => {
    const log = new ExactRevisionLog();
    const index = new StreamIdIndex(100);
    log.loseNextAck = true;
    await expect(append(log, index, ids('a', 'b'), 'no_stream')).rejects.toThrow('deadline exceeded');
    expect(await append(log, index, ids('a', 'b'), 'no_stream')).toMatchObject({ duplicate: true });
    expect(log.streams.get('alert-1')).toEqual(['a', 'b']);
  });

  it('rejects a batch of which only some events are stored, writing nothing', async () => {
    const log = new ExactRevisionLog();
    const index = new StreamIdIndex(100);
    await append(log, index, ids('a'));
    const error = await append(log, index, ids('a', 'b')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ errorCode: 'duplicate_event_id' });
    expect(log.streams.get('alert-1')).toEqual(['a']);
  });

  it('reports the revision it found when the expectation fails', async () => {
    const log = new ExactRevisionLog();
    const index = new StreamIdIndex(100);
    await append(log, index, ids('a', 'b'));
    const error = await append(log, index, ids('c'), 0).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WrongExpectedRevisionError);
    expect(error).toMatchObject({ streamId: 'alert-1', expected: 0, actual: 1 });
    await expect(append(log, index, ids('c'), 'no_stream')).rejects.toMatchObject({ actual: 1 });
    await expect(
      appendIdempotently(log, index, 'alert-2', ids('x'), { expected: 'stream_exists', maxAttempts: 3 }),
    ).rejects.toMatchObject({ actual: -1 });
  });

  it('reads only the tail of a stream it already knows', async () => {
    const log = new ExactRevisionLog();
    const index = new StreamIdIndex(100);
    await append(log, index, ids('a', 'b', 'c'));
    const readIds = log.readIds.bind(log);
    const froms: number[] = [];
    log.readIds = (streamId, from) => {
      froms.push(from);
      return readIds(streamId, from);
    };
    await append(log, index, ids('d'));
    expect(froms).toEqual([3]);
  });

  it('forgets least recently used streams beyond its id budget, and stays correct without them', async () => {
    const log = new ExactRevisionLog();
    const index = new StreamIdIndex(3);
    await appendIdempotently(log, index, 's1', ids('a', 'b'), { expected: 'any', maxAttempts: 3 });
    await appendIdempotently(log, index, 's2', ids('c', 'd'), { expected: 'any', maxAttempts: 3 });
    expect(index.get('s1')).toBeUndefined();
    expect(index.get('s2')?.revision).toBe(1);
    expect(index.size).toBe(2);
    expect(
      await appendIdempotently(log, index, 's1', ids('a', 'b'), { expected: 'any', maxAttempts: 3 }),
    ).toMatchObject({ duplicate: true });
  });

  it('retries an any-append that lost a race and stores both writers once', async () => {
    const log = new ExactRevisionLog();
    const [first, second] = [new StreamIdIndex(100), new StreamIdIndex(100)];
    log.pause = () => new Promise((resolve) => setImmediate(resolve));
    const appendExact = log.appendExact.bind(log);
    let rejected = 0;
    log.appendExact = async (streamId, events, exact) => {
      const result = await appendExact(streamId, events, exact);
      if (!result.ok) rejected += 1;
      return result;
    };
    const results = await Promise.all([append(log, first, ids('a')), append(log, second, ids('b'))]);
    expect(rejected).toBe(1);
    expect(results.map((result) => result.duplicate)).toEqual([false, false]);
    expect([...(log.streams.get('alert-1') ?? [])].sort()).toEqual(['a', 'b']);
  });

  it('never stores an id twice, however concurrent appends, retries and lost acknowledgements interleave', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            batch: fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), {
              minLength: 1,
              maxLength: 3,
            }),
            process: fc.nat({ max: 2 }),
            loseAck: fc.boolean(),
          }),
          { minLength: 1, maxLength: 8 },
        ),
        fc.array(fc.nat({ max: 3 }), { minLength: 1, maxLength: 20 }),
        async (appends, delays) => {
          const log = new ExactRevisionLog();
          const processes = [new StreamIdIndex(100), new StreamIdIndex(2), new StreamIdIndex(0)];
          let tick = 0;
          log.pause = () => new Promise((resolve) => setTimeout(resolve, delays[tick++ % delays.length]));
          const acknowledged = new Set<string>();
          await Promise.all(
            appends.map(async ({ batch, process, loseAck }) => {
              const events = ids(...batch);
              for (let attempt = 0; attempt < 3; attempt++) {
                if (loseAck && attempt === 0) log.loseNextAck = true;
                try {
                  await append(log, processes[process]!, events);
                  for (const id of batch) acknowledged.add(id);
                  return;
                } catch (error) {
                  if (error instanceof ConflictError) return;
                }
              }
            }),
          );
          const stored = log.streams.get('alert-1') ?? [];
          expect(new Set(stored).size).toBe(stored.length);
          for (const id of acknowledged) expect(stored).toContain(id);
        },
      ),
      { numRuns: 150 },
    );
  });
});
