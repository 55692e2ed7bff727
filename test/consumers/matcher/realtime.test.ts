import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { realtimeMatcher } from '../../../consumers/matcher/realtime.ts';
import type { EventStore } from '../../../src/eventstore/port.ts';
import { episodeStream, storedEventId } from '../../../src/ingestion/events.ts';
import { matchId } from '../../../src/matching/engine/match-id.ts';
import { type AlertMatchedEventData, matchStream } from '../../../src/matching/streams.ts';
import { readConsumerCheckpoint, runConsumer } from '../../../src/subscriptions/consumer.ts';
import { episodeEvent } from '../../fixtures/events.ts';
import { type PipelineFixture, pipelineFixture, runUntilCaughtUp } from '../../matching/support.ts';

describe('the realtime matcher', () => {
  let f: PipelineFixture;
  const matcher = () => realtimeMatcher(f.deps);

  beforeAll(async () => {
    f = await pipelineFixture();
    await f.entity('ent-nvidia', 'NVIDIA', ['Nvidia Corp']);
    await f.entity('ent-amd', 'AMD');
  });
  afterAll(() => f.close());

  const countFor = async (alertId: string, episodeId: string) =>
    (await f.matches()).filter((event) => event.data.alertId === alertId && event.data.sourceId === episodeId)
      .length;

  it('appends one AlertMatched per matching alert, with the match fields, episode block and causation', async () => {
    const alert = await f.createAlert('ent-nvidia');
    const episode = episodeEvent({
      lines: ['Welcome back.', 'NVIDIA reported earnings.', 'Nvidia Corp guided higher.', 'Bye.'],
      language: 'en-GB',
    });
    await f.ingest([episode]);
    await runUntilCaughtUp(f.db, f.store, matcher());

    const id = matchId(alert.id, episode.episode.id);
    const [event] = await f.store.readStream(matchStream(id));
    expect(event).toMatchObject({ id, type: 'AlertMatched' });
    const episodeEventId = storedEventId(episode.event_id);
    expect(event!.metadata).toMatchObject({ correlationId: episodeEventId, causationId: episodeEventId });
    expect(event!.data).toMatchObject({
      matchId: id,
      alertId: alert.id,
      projectId: f.tenant.project.id,
      organizationId: f.tenant.organization.id,
      kind: 'ENTITY_MENTION',
      entityId: 'ent-nvidia',
      entityType: 'COMPANY',
      sourceId: episode.episode.id,
      sourceType: 'EPISODE',
      detectedAt: '2026-11-20T12:00:00.000Z',
      mentionCount: 2,
      mentionVariants: ['NVIDIA', 'Nvidia', 'Nvidia Corp'],
      relevance: 'incidental',
      roles: ['HOST'],
      truncated: false,
      isBackfilled: false,
      language: 'en-GB',
      episode: {
        podcast_id: 'pod-1',
        podcast_title: 'Chip Talk',
        podcast_slug: 'chip-talk',
        title: episode.episode.title,
        duration_seconds: 3600,
        published_at: '2026-11-20T06:00:00.000Z',
        podcast_bias: 'CENTER',
        podcast_popularity: 0.96,
        podcast_popularity_badge: 'Very Popular',
      },
    });
    const { windows } = event!.data as AlertMatchedEventData;
    expect(windows).toHaveLength(1);
    expect(windows[0]!.lines.map((line) => line.is_mention)).toEqual([false, true, true, false]);
  });

  it('yields one match per alert for an episode ingested five times, redelivered or re-sent with new event ids', async () => {
    const alert = await f.createAlert('ent-amd');
    const episode = episodeEvent({ lines: ['AMD launched a chip.'] });
    await f.ingest([episode]);
    await f.ingest([episode]);
    await runUntilCaughtUp(f.db, f.store, matcher());
    for (let i = 0; i < 3; i++) {
      await f.ingest([{ ...episode, event_id: `resend-${i}-${episode.event_id}` }]);
      await runUntilCaughtUp(f.db, f.store, matcher());
    }
    expect(await f.store.readStream(episodeStream(episode.episode.id))).toHaveLength(4);
    expect(await countFor(alert.id, episode.episode.id)).toBe(1);
  });

  it('loses and doubles no match when stopped after appending part of a batch and restarted', async () => {
    await f.entity('ent-tsmc', 'TSMC');
    await f.entity('ent-asml', 'ASML');
    const alerts = [
      await f.createAlert('ent-tsmc'),
      await f.createAlert('ent-tsmc'),
      await f.createAlert('ent-asml'),
    ];
    const episodes = Array.from({ length: 6 }, (_, i) =>
      episodeEvent({ lines: [`Episode ${i}: TSMC and ASML.`, 'More later.'] }),
    );
    await f.ingest(episodes);
    const before = await readConsumerCheckpoint(f.db, { name: 'matcher' });
    // The run below must read the entities, alerts and episodes as one batch (of up to 50). A
    // transaction still open elsewhere in the cluster (another test file) holds newer events back
    // from readers (docs/event-store.md, "Reading"): a batch read meanwhile ends at the alerts and
    // moves the checkpoint. Once the episodes are readable they stay so: wait for that.
    await vi.waitFor(
      async () => {
        const page = await f.store.readAll({ after: before, eventTypes: ['EpisodeTranscribed'] });
        expect(page.events).toHaveLength(episodes.length);
      },
      { timeout: 20_000, interval: 10 },
    );

    // A store whose process "dies" after storing 5 AlertMatched of this run.
    const crashing: EventStore = {
      ...f.store,
      appendMany: async (appends) => {
        if (appends[0]?.events[0]?.type !== 'AlertMatched') return f.store.appendMany(appends);
        await f.store.appendMany(appends.slice(0, 5));
        throw new Error('killed');
      },
    };
    const controller = new AbortController();
    await runConsumer(f.db, crashing, realtimeMatcher({ ...f.deps, store: crashing }), {
      signal: controller.signal,
      onError: () => controller.abort(),
    });
    expect(await readConsumerCheckpoint(f.db, { name: 'matcher' })).toBe(before);
    const partial = await f.matches();
    const ids = new Set(episodes.map((e) => e.episode.id));
    expect(partial.filter((event) => ids.has(event.data.sourceId)).length).toBe(5);

    await runUntilCaughtUp(f.db, f.store, matcher());
    const all = (await f.matches()).filter((event) => ids.has(event.data.sourceId));
    expect(all).toHaveLength(alerts.length * episodes.length);
    expect(new Set(all.map((event) => event.id)).size).toBe(all.length);
  });

  it('does not match a paused or deleted alert, and matches new episodes again once resumed', async () => {
    await f.entity('ent-intel', 'Intel');
    const alert = await f.createAlert('ent-intel');
    const deleted = await f.createAlert('ent-intel');
    await f.service.update(f.caller, alert.id, { is_active: false });
    await f.service.delete(f.caller, deleted.id);
    const whilePaused = episodeEvent({ lines: ['Intel news.'] });
    await f.ingest([whilePaused]);
    await runUntilCaughtUp(f.db, f.store, matcher());

    await f.service.update(f.caller, alert.id, { is_active: true });
    const afterResume = episodeEvent({ lines: ['Intel again.'] });
    await f.ingest([afterResume]);
    await runUntilCaughtUp(f.db, f.store, matcher());

    expect(await countFor(alert.id, whilePaused.episode.id)).toBe(0);
    expect(await countFor(alert.id, afterResume.episode.id)).toBe(1);
    expect(await countFor(deleted.id, whilePaused.episode.id)).toBe(0);
    expect(await countFor(deleted.id, afterResume.episode.id)).toBe(0);
  });

  it('matches each episode against the alerts that existed when it was appended, also after a restart', async () => {
    await f.entity('ent-arm', 'Arm Holdings');
    const before = episodeEvent({ lines: ['Arm Holdings filed.'] });
    await f.ingest([before]);
    const alert = await f.createAlert('ent-arm');
    const after = episodeEvent({ lines: ['Arm Holdings again.'] });
    await f.ingest([after]);
    // Re-sending the older episode after the alert exists: its match belongs to the alert's
    // backfill, so it is written as backfilled (never notified), with the backfill's own id.
    await f.ingest([{ ...before, event_id: `again-${before.event_id}` }]);
    await runUntilCaughtUp(f.db, f.store, matcher());

    const byEpisode = (episodeId: string) =>
      f
        .matches()
        .then((all) => all.filter((m) => m.data.alertId === alert.id && m.data.sourceId === episodeId));
    expect((await byEpisode(before.episode.id)).map((m) => m.data.isBackfilled)).toEqual([true]);
    expect((await byEpisode(after.episode.id)).map((m) => m.data.isBackfilled)).toEqual([false]);
  });

  it('follows entity renames: new names are detected for episodes appended after the upsert', async () => {
    await f.entity('ent-meta', 'Facebook');
    const alert = await f.createAlert('ent-meta');
    const old = episodeEvent({ lines: ['Meta Platforms posted results.'] });
    await f.ingest([old]);
    await f.entity('ent-meta', 'Meta Platforms', ['Facebook']);
    const renamed = episodeEvent({ lines: ['Meta Platforms posted results.'] });
    await f.ingest([renamed]);
    await runUntilCaughtUp(f.db, f.store, matcher());

    expect(await countFor(alert.id, old.episode.id)).toBe(0);
    expect(await countFor(alert.id, renamed.episode.id)).toBe(1);
  });
});
