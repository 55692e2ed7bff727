// Review: a second holder's start() (what `earshot projections retry-parked` runs in its own
// process, or a standby taking over) moves the snapshot under the live matcher, which then never
// writes it again until it restarts.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { realtimeMatcher } from '../../../consumers/matcher/realtime.ts';
import { readSnapshot } from '../../../consumers/matcher/snapshot.ts';
import { comparePositions } from '../../../src/eventstore/port.ts';
import {
  consumerSubscriber,
  readConsumerCheckpoint,
  runConsumer,
} from '../../../src/subscriptions/consumer.ts';
import { parkEvent } from '../../../src/subscriptions/parked.ts';
import { retryParked } from '../../../src/subscriptions/runner.ts';
import { podcastEvent } from '../../catalog/support.ts';
import { episodeEvent } from '../../fixtures/events.ts';
import { headPosition, type PipelineFixture, pipelineFixture } from '../../matching/support.ts';

let f: PipelineFixture;
const checkpoint = () => readConsumerCheckpoint(f.db, { name: 'matcher' });
const caughtUp = async () => {
  const head = await headPosition(f.db);
  for (let i = 0; i < 1000; i++) {
    if (comparePositions(await checkpoint(), head) >= 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('not caught up');
};

beforeAll(async () => {
  f = await pipelineFixture();
  await f.entity('ent-chip', 'Chipzilla');
  await f.createAlert('ent-chip');
});
afterAll(() => f.close());

it('the live matcher keeps its snapshot moving after a retry-parked run wrote it', async () => {
  const controller = new AbortController();
  const running = runConsumer(f.db, f.store, realtimeMatcher(f.deps), {
    signal: controller.signal,
    lockRetryMs: 20,
    retryDelayMs: 20,
  });
  try {
    await f.ingest([episodeEvent({ lines: ['Chipzilla shipped a chip.'] })]);
    await caughtUp();
    // The crawl goes on: the live matcher's last batch holds a podcast update, which its snapshot
    // takes in at its next batch.
    await f.ingest([podcastEvent({ id: 'show-a', title: 'A', language: 'en' }, '2026-11-20T10:00:00Z')]);
    await caughtUp();
    await f.ingest([podcastEvent({ id: 'show-a', title: 'A', language: 'de' }, '2026-11-21T10:00:00Z')]);
    await caughtUp();
    // `earshot projections retry-parked` (its own process, its own matcher) replays a parked
    // episode: its start() at the stored checkpoint writes the snapshot there.
    const [episode] = (await f.store.readAll({ eventTypes: ['EpisodeTranscribed'], limit: 1 })).events;
    await parkEvent(f.db, 'consumer:matcher', episode!, new Error('was failing'), 5);
    expect(await retryParked(f.db, f.store, consumerSubscriber(realtimeMatcher(f.deps)))).toMatchObject({
      replayed: 1,
    });
    const movedByOther = (await readSnapshot(f.db))!.position;
    for (let day = 22; day < 26; day++) {
      await f.ingest([
        podcastEvent({ id: 'show-a', title: 'A', language: 'fr' }, `2026-11-${day}T10:00:00Z`),
      ]);
      await caughtUp();
    }
    const now = (await readSnapshot(f.db))!.position;
    // Four batches later the live matcher should have moved the snapshot on.
    expect(comparePositions(now, movedByOther)).toBeGreaterThan(0);
  } finally {
    controller.abort();
    await running;
  }
});
