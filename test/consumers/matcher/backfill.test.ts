import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfill } from '../../../consumers/matcher/backfill.ts';
import { realtimeMatcher } from '../../../consumers/matcher/realtime.ts';
import { episodesProjection } from '../../../projections/episodes/projection.ts';
import { alertStream } from '../../../src/alerts/alert.ts';
import { episodeEvent } from '../../fixtures/events.ts';
import { type PipelineFixture, pipelineFixture, project, runUntilCaughtUp } from '../../matching/support.ts';

describe('the creation-time backfill', () => {
  let f: PipelineFixture;

  beforeAll(async () => {
    f = await pipelineFixture();
    await f.entity('ent-nvidia', 'NVIDIA');
  });
  afterAll(() => f.close());

  it('matches the 7 days before creation as backfilled, and leaves later episodes to the realtime matcher', async () => {
    const inWindow = episodeEvent({ lines: ['NVIDIA shipped.'], publishedAt: '2026-11-18T09:00:00Z' });
    const edge = episodeEvent({ lines: ['NVIDIA at the edge.'], publishedAt: '2026-11-13T12:00:00Z' });
    const tooOld = episodeEvent({ lines: ['NVIDIA long ago.'], publishedAt: '2026-11-13T11:59:59Z' });
    const unrelated = episodeEvent({ lines: ['Nothing to see.'], publishedAt: '2026-11-19T09:00:00Z' });
    await f.ingest([inWindow, edge, tooOld, unrelated]);
    const alert = await f.createAlert('ent-nvidia');
    // Published inside the window, but ingested after the alert: a new episode for the alert.
    const later = episodeEvent({ lines: ['NVIDIA news today.'], publishedAt: '2026-11-19T10:00:00Z' });
    await f.ingest([later]);

    // The backfill waits for the episodes read model to reach the alert, which happens meanwhile.
    const projecting = new Promise((resolve) => setTimeout(resolve, 200)).then(() =>
      project(f.db, f.store, episodesProjection),
    );
    await runUntilCaughtUp(f.db, f.store, backfill({ ...f.deps, pollMs: 20 }));
    await projecting;
    await runUntilCaughtUp(f.db, f.store, realtimeMatcher(f.deps));
    // A second run (a restart that repeats the batch) adds nothing.
    await f.db.query(`update projection_checkpoints set position = '0/0' where name = 'consumer:backfill'`);
    await runUntilCaughtUp(f.db, f.store, backfill({ ...f.deps, pollMs: 20 }));

    const matches = (await f.matches()).filter((event) => event.data.alertId === alert.id);
    const byEpisode = new Map(matches.map((event) => [event.data.sourceId, event]));
    expect(matches).toHaveLength(3);
    expect(byEpisode.get(inWindow.episode.id)?.data.isBackfilled).toBe(true);
    expect(byEpisode.get(edge.episode.id)?.data.isBackfilled).toBe(true);
    expect(byEpisode.has(tooOld.episode.id)).toBe(false);
    expect(byEpisode.get(later.episode.id)?.data.isBackfilled).toBe(false);

    const [created] = await f.store.readStream(alertStream(alert.id));
    expect(byEpisode.get(inWindow.episode.id)?.metadata.causationId).toBe(created!.id);
  });

  it('uses the filters the alert was created with', async () => {
    const french = episodeEvent({
      lines: ['NVIDIA en France.'],
      publishedAt: '2026-11-19T08:00:00Z',
      language: 'fr-FR',
    });
    const english = episodeEvent({ lines: ['NVIDIA in English.'], publishedAt: '2026-11-19T08:00:00Z' });
    await f.ingest([french, english]);
    const alert = await f.createAlert('ent-nvidia', { filters: { languages: ['fr'] } });
    await project(f.db, f.store, episodesProjection);
    await runUntilCaughtUp(f.db, f.store, backfill({ ...f.deps, pollMs: 20 }));

    const matched = (await f.matches())
      .filter((event) => event.data.alertId === alert.id)
      .map((e) => e.data.sourceId);
    expect(matched).toContain(french.episode.id);
    expect(matched).not.toContain(english.episode.id);
  });
});
