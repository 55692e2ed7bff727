// The realtime matcher's snapshot of the shows' languages, the entities' names and the alerts
// (docs/matching-pipeline.md, "Restart"): a restart loads it and replays only the podcast, entity
// and alert events after it, and matches exactly as a replay of every event would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realtimeMatcher } from '../../../consumers/matcher/realtime.ts';
import { readSnapshot, writeSnapshot } from '../../../consumers/matcher/snapshot.ts';
import { alertStream } from '../../../src/alerts/alert.ts';
import { comparePositions, type EventStore } from '../../../src/eventstore/port.ts';
import type { EpisodeTranscribed } from '../../../src/ingestion/events.ts';
import { resetCheckpoint } from '../../../src/subscriptions/checkpoints.ts';
import { readConsumerCheckpoint, runConsumer } from '../../../src/subscriptions/consumer.ts';
import { podcastEvent } from '../../catalog/support.ts';
import { episodeEvent, untaggedEpisode } from '../../fixtures/events.ts';
import { type PipelineFixture, pipelineFixture, runUntilCaughtUp } from '../../matching/support.ts';

/** An episode of `showId` naming no language of its own, that mentions Chipzilla. */
const untagged = (showId: string) => untaggedEpisode(showId, ['Welcome.', 'Chipzilla shipped a chip.']);

describe("the realtime matcher's snapshot", () => {
  let f: PipelineFixture;
  let english: { id: string };
  let german: { id: string };
  const never = new AbortController().signal;
  const checkpoint = () => readConsumerCheckpoint(f.db, { name: 'matcher' });
  /** A restart at the checkpoint: it writes the snapshot there. */
  const restart = async () => realtimeMatcher(f.deps).start!(await checkpoint(), never);
  const entries = async () =>
    (await readSnapshot(f.db))!.entries
      .map((e) => `${e.kind} ${e.key} ${e.at} ${JSON.stringify(e.value)}`)
      .sort();
  const alertRows = async () =>
    (await readSnapshot(f.db))!.alerts
      .map(
        (a) =>
          `${a.alertId} ${a.revision} ${a.createdAt} ${a.state.status} ${JSON.stringify(a.state.alert.filters)}`,
      )
      .sort();
  const matchesOf = async (episode: EpisodeTranscribed) =>
    (await f.matches())
      .filter((event) => event.data.sourceId === episode.episode.id)
      .map((event) => ({ id: event.id, alertId: event.data.alertId, language: event.data.language }));

  beforeAll(async () => {
    f = await pipelineFixture();
    await f.entity('ent-chip', 'Chipzilla', ['Chipzilla Inc']);
    english = await f.createAlert('ent-chip', { filters: { languages: ['en'] } });
    german = await f.createAlert('ent-chip', { filters: { languages: ['de'] } });
    await f.ingest([
      podcastEvent({ id: 'show-a', title: 'Show A', language: 'en' }, '2026-11-20T10:00:00Z'),
      podcastEvent({ id: 'show-b', title: 'Show B', language: 'fr' }, '2026-11-20T10:00:00Z'),
      podcastEvent({ id: 'show-c', title: 'Show C' }, '2026-11-20T10:00:00Z'),
    ]);
    await runUntilCaughtUp(f.db, f.store, realtimeMatcher(f.deps));
    await restart();
  });
  afterAll(() => f.close());

  it('holds the shows with a language and the entities, at a position the checkpoint has reached', async () => {
    const snapshot = await readSnapshot(f.db);
    expect(comparePositions(snapshot!.position, await checkpoint())).toBe(0);
    expect(await entries()).toEqual([
      `entity ent-chip ${Date.parse('2026-11-20T10:00:00Z')} {"names":["Chipzilla","Chipzilla Inc"]}`,
      `show show-a ${Date.parse('2026-11-20T10:00:00Z')} {"language":"en"}`,
      `show show-b ${Date.parse('2026-11-20T10:00:00Z')} {"language":"fr"}`,
    ]);
  });

  it('honours a language change stored after the snapshot, and loses and doubles nothing when stopped mid-batch', async () => {
    const snapshotBefore = (await readSnapshot(f.db))!.position;
    const episodes = [untagged('show-a'), untagged('show-b')];
    await f.ingest([
      podcastEvent({ id: 'show-a', title: 'Show A', language: 'de' }, '2026-11-21T10:00:00Z'),
      ...episodes,
      // An older version stored later changes nothing.
      podcastEvent({ id: 'show-b', title: 'Show B', language: 'en' }, '2026-11-19T10:00:00Z'),
    ]);
    // A store whose process "dies" after storing the first AlertMatched of this run.
    const crashing: EventStore = {
      ...f.store,
      appendMany: async (appends) => {
        if (appends[0]?.events[0]?.type !== 'AlertMatched') return f.store.appendMany(appends);
        await f.store.appendMany(appends.slice(0, 1));
        throw new Error('killed');
      },
    };
    const controller = new AbortController();
    await runConsumer(f.db, crashing, realtimeMatcher({ ...f.deps, store: crashing }), {
      signal: controller.signal,
      onError: () => controller.abort(),
    });
    // The crash left the snapshot where the checkpoint had got to, not past it.
    const snapshot = await readSnapshot(f.db);
    expect(comparePositions(snapshot!.position, await checkpoint())).toBeLessThanOrEqual(0);
    expect(comparePositions(snapshot!.position, snapshotBefore)).toBeGreaterThanOrEqual(0);

    await runUntilCaughtUp(f.db, f.store, realtimeMatcher(f.deps));
    const [ofA, ofB] = await Promise.all(episodes.map(matchesOf));
    expect(ofA).toEqual([expect.objectContaining({ alertId: german.id, language: 'de' })]);
    expect(ofB).toEqual([]);
    await restart();
    expect(await entries()).toContain(`show show-a ${Date.parse('2026-11-21T10:00:00Z')} {"language":"de"}`);
    expect(await entries()).toContain(`show show-b ${Date.parse('2026-11-20T10:00:00Z')} {"language":"fr"}`);
  });

  it('holds what a replay of every event holds', async () => {
    await f.ingest([
      podcastEvent({ id: 'show-c', title: 'Show C', language: 'en-GB' }, '2026-11-22T10:00:00Z'),
      podcastEvent({ id: 'show-d', title: 'Show D', language: 'es' }, '2026-11-22T10:00:00Z'),
    ]);
    await f.entity('ent-chip', 'Chipzilla', ['Chipzilla Inc', 'CZ']);
    await runUntilCaughtUp(f.db, f.store, realtimeMatcher(f.deps));
    await restart();
    const incremental = await entries();
    const incrementalAlerts = await alertRows();
    await f.db.query('delete from matcher_snapshot_entries');
    await f.db.query('delete from matcher_snapshot_alerts');
    await f.db.query('delete from matcher_snapshot');
    await restart();
    expect(await entries()).toEqual(incremental);
    expect(await alertRows()).toEqual(incrementalAlerts);
    expect(incrementalAlerts).toHaveLength(2);
    expect(incremental).toContain(
      `entity ent-chip ${Date.parse('2026-11-20T10:00:00Z')} {"names":["Chipzilla","Chipzilla Inc","CZ"]}`,
    );
  });

  it('after a checkpoint reset (a rebuild), replaces the snapshot ahead of it and matches each episode once', async () => {
    const episode = untagged('show-c');
    await f.ingest([episode]);
    await runUntilCaughtUp(f.db, f.store, realtimeMatcher(f.deps));
    await restart();
    const before = await entries();
    const matches = await f.matches();
    expect(await matchesOf(episode)).toEqual([
      expect.objectContaining({ alertId: english.id, language: 'en-GB' }),
    ]);

    await resetCheckpoint(f.db, 'consumer:matcher');
    await realtimeMatcher(f.deps).start!(await checkpoint(), never);
    expect(await readSnapshot(f.db)).toMatchObject({
      position: await checkpoint(),
      entries: [],
      alertsPosition: await checkpoint(),
      alerts: [],
    });
    await runUntilCaughtUp(f.db, f.store, realtimeMatcher(f.deps));
    await restart();
    expect(await entries()).toEqual(before);
    const again = await f.matches();
    expect(again.map((e) => e.id).sort()).toEqual(matches.map((e) => e.id).sort());
  });

  it('writes nothing when another writer moved the snapshot', async () => {
    const before = await readSnapshot(f.db);
    const stale = { kind: 'show' as const, key: 'show-a', at: 0, value: { language: 'xx' } };
    expect(
      await writeSnapshot(f.db, {
        from: 'not-it',
        position: before!.position,
        replace: true,
        entries: [stale],
        alerts: [],
      }),
    ).toBe(false);
    expect(
      await writeSnapshot(f.db, {
        from: undefined,
        position: before!.position,
        replace: true,
        entries: [stale],
        alerts: [],
      }),
    ).toBe(false);
    expect(await readSnapshot(f.db)).toEqual(before);
  });

  it('replays the alert events stored after the snapshot', async () => {
    // A German show: its episodes match the German alert while it is active.
    const first = untagged('show-g');
    await f.ingest([
      podcastEvent({ id: 'show-g', title: 'Show G', language: 'de' }, '2026-11-23T10:00:00Z'),
      first,
    ]);
    await runUntilCaughtUp(f.db, f.store, realtimeMatcher(f.deps));
    expect(await matchesOf(first)).toEqual([expect.objectContaining({ alertId: german.id, language: 'de' })]);
    await restart();
    const before = await readSnapshot(f.db);
    expect(before!.alerts.find((a) => a.alertId === german.id)?.state.status).toBe('active');

    // The alert is paused: a batch applies the pause and moves the checkpoint, and the snapshot
    // stays before it (it takes changes in at the next batch).
    await f.store.append(alertStream(german.id), [
      { type: 'AlertPaused', data: { alertId: german.id, pausedAt: '2026-11-23T11:00:00.000Z' } },
    ]);
    await runUntilCaughtUp(f.db, f.store, realtimeMatcher(f.deps));
    const after = await readSnapshot(f.db);
    expect(after!.alertsPosition).toBe(before!.alertsPosition);
    expect(comparePositions(await checkpoint(), after!.alertsPosition!)).toBeGreaterThan(0);

    // A restart from that snapshot knows the alert is paused: the next German episode is not matched.
    const second = untagged('show-g');
    await f.ingest([second]);
    await runUntilCaughtUp(f.db, f.store, realtimeMatcher(f.deps));
    expect(await matchesOf(second)).toEqual([]);
    expect((await alertRows()).find((row) => row.startsWith(`${german.id} `))).toMatch(/ paused /);
  });

  it("keeps an alert's creation position, so a re-sent older episode is still the backfill's", async () => {
    await f.entity('ent-arm', 'Arm Holdings');
    const before = episodeEvent({ lines: ['Arm Holdings filed.'] });
    await f.ingest([before]);
    await runUntilCaughtUp(f.db, f.store, realtimeMatcher(f.deps));
    const alert = await f.createAlert('ent-arm');
    await runUntilCaughtUp(f.db, f.store, realtimeMatcher(f.deps));
    await restart();
    const [created] = await f.store.readStream(alertStream(alert.id), { limit: 1 });
    const held = (await readSnapshot(f.db))!;
    expect(held.alerts.find((a) => a.alertId === alert.id)?.createdAt).toBe(created!.position);
    expect(comparePositions(held.alertsPosition!, created!.position)).toBeGreaterThanOrEqual(0);

    // Matched by a matcher that took the alert from the snapshot (no alert event after it).
    await f.ingest([{ ...before, event_id: `again-${before.event_id}` }]);
    await runUntilCaughtUp(f.db, f.store, realtimeMatcher(f.deps));
    const matches = (await f.matches()).filter(
      (m) => m.data.alertId === alert.id && m.data.sourceId === before.episode.id,
    );
    expect(matches.map((m) => m.data.isBackfilled)).toEqual([true]);
  });

  it('reads no alert event on a restart from a snapshot at the checkpoint: the alerts come from the snapshot', async () => {
    await restart();
    let alertEvents = 0;
    const counting: EventStore = Object.assign(Object.create(f.store) as EventStore, {
      readAll: async (...args: Parameters<EventStore['readAll']>) => {
        const page = await f.store.readAll(...args);
        alertEvents += page.events.filter((e) => e.type.startsWith('Alert')).length;
        return page;
      },
    });
    const held = await alertRows();
    expect(held.length).toBeGreaterThan(0);
    await realtimeMatcher({ ...f.deps, store: counting }).start!(await checkpoint(), never);
    expect(alertEvents).toBe(0);
    expect(await alertRows()).toEqual(held);
  });

  it('replays the alert events after alerts_position when an older matcher moved only the position', async () => {
    // A matcher from before migration 0256 (a rolling deploy) moves `position` and leaves the alert
    // rows and `alerts_position` where a newer one wrote them: those rows are as of alerts_position.
    await restart();
    const before = (await readSnapshot(f.db))!;
    expect(before.alerts.find((a) => a.alertId === german.id)?.state.status).toBe('paused');
    await f.store.append(alertStream(german.id), [
      { type: 'AlertResumed', data: { alertId: german.id, resumedAt: '2026-11-23T12:00:00.000Z' } },
    ]);
    await runUntilCaughtUp(f.db, f.store, realtimeMatcher(f.deps));
    const moved = await f.db.query('update matcher_snapshot set position = $1 where position = $2', [
      await checkpoint(),
      before.position,
    ]);
    expect(moved.rowCount).toBe(1);
    const lagging = (await readSnapshot(f.db))!;
    expect(lagging.alertsPosition).toBe(before.alertsPosition);
    expect(comparePositions(lagging.position, lagging.alertsPosition!)).toBeGreaterThan(0);

    // The restart takes the rows as of alerts_position and replays the resume stored after it.
    await restart();
    const after = (await readSnapshot(f.db))!;
    expect(after.alertsPosition).toBe(await checkpoint());
    expect((await alertRows()).find((row) => row.startsWith(`${german.id} `))).toMatch(/ active /);
    const episode = untagged('show-g');
    await f.ingest([episode]);
    await runUntilCaughtUp(f.db, f.store, realtimeMatcher(f.deps));
    expect(await matchesOf(episode)).toEqual([
      expect.objectContaining({ alertId: german.id, language: 'de' }),
    ]);
  });

  it('replays every alert event, and writes the alerts, when the snapshot has none (written before 0256)', async () => {
    await restart();
    const held = await alertRows();
    expect(held.length).toBeGreaterThan(0);
    await f.db.query('update matcher_snapshot set alerts_position = null');
    await f.db.query('delete from matcher_snapshot_alerts');
    await restart();
    const snapshot = await readSnapshot(f.db);
    expect(snapshot!.alertsPosition).toBe(await checkpoint());
    expect(await alertRows()).toEqual(held);
  });
});
