import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import { type Consumer, runConsumer } from '../../src/subscriptions/consumer.ts';
import { episodeEvent } from '../fixtures/events.ts';
import { type PipelineFixture, pipelineFixture } from '../matching/support.ts';

describe('a leased, checkpointed consumer', () => {
  let f: PipelineFixture;
  beforeAll(async () => {
    f = await pipelineFixture();
  });
  afterAll(() => f.close());

  it('is followed by one process at a time; a standby takes over from the checkpoint when it stops', async () => {
    const seen: { by: string; id: string }[] = [];
    const consumer = (by: string): Consumer => ({
      name: 'lease-test',
      eventTypes: ['EpisodeTranscribed'],
      async handle(events: readonly RecordedEvent[]) {
        for (const event of events) seen.push({ by, id: event.id });
      },
    });
    const until = async (count: number) => {
      for (let i = 0; seen.length < count; i++) {
        if (i > 2000) throw new Error(`only ${seen.length} of ${count} events handled`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    const a = new AbortController();
    const b = new AbortController();
    const options = { lockRetryMs: 20, retryDelayMs: 20 };
    const runningA = runConsumer(f.db, f.store, consumer('a'), { signal: a.signal, ...options });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const runningB = runConsumer(f.db, f.store, consumer('b'), { signal: b.signal, ...options });

    await f.ingest([episodeEvent(), episodeEvent()]);
    await until(2);
    a.abort();
    await runningA;
    await f.ingest([episodeEvent()]);
    await until(3);
    b.abort();
    await runningB;

    expect(seen.map((entry) => entry.by)).toEqual(['a', 'a', 'b']);
    expect(new Set(seen.map((entry) => entry.id)).size).toBe(3);
  });
});
