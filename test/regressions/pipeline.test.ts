// Regressions found in review: each once stopped a read model or lost or hid a match.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { catchUpFanout } from '../../consumers/delivery-fanout/fanout.ts';
import { scheduleDueDigests } from '../../consumers/digests/digests.ts';
import { backfill } from '../../consumers/matcher/backfill.ts';
import { realtimeMatcher } from '../../consumers/matcher/realtime.ts';
import { deliveriesProjection } from '../../projections/deliveries/projection.ts';
import { episodesProjection } from '../../projections/episodes/projection.ts';
import { validateEvent } from '../../src/ingestion/validate.ts';
import { catchUpProjection } from '../../src/subscriptions/projection-runner.ts';
import { deliveryFixture } from '../delivery/support.ts';
import { episodeEvent } from '../fixtures/events.ts';
import { episodeWith } from '../matching/episode-fixture.ts';
import { pipelineFixture, project, runUntilCaughtUp } from '../matching/support.ts';
import { createTestDb, TEST_DATABASE_URL } from '../support/db.ts';

describe('text no read model can store', () => {
  it('records a webhook failure whose response body holds a NUL byte, and the deliveries read model moves on', async () => {
    const f = await deliveryFixture();
    try {
      const alert = await f.createAlert({
        notifications: [{ type: 'WEBHOOK', webhook_connection_id: f.webhook.id }],
      });
      await f.match(alert.id);
      f.receiver.respondWith({ status: 500, body: 'oops\u0000bad\ud800' });
      await f.fanOut();
      await f.attemptDue();
      await catchUpProjection(f.db, f.store, deliveriesProjection);
      const { rows } = await f.db.query<{ status: string; error_message: string }>(
        'select status, error_message from deliveries where alert_id = $1',
        [alert.id],
      );
      expect(rows[0]!.status).toBe('FAILED');
      expect(rows[0]!.error_message).toContain('oops bad');
    } finally {
      await f.close();
    }
  });

  it('rejects a lone UTF-16 surrogate in a producer event, naming where', () => {
    const episode = episodeEvent();
    episode.episode.title = JSON.parse('"Bad \\ud800"');
    expect(validateEvent(episode, '/events/0')).toEqual([
      expect.objectContaining({
        location: '/events/0/episode/title',
        message: expect.stringMatching(/surrogate/),
      }),
    ]);
  });
});

describe('ordering and visibility', () => {
  it('keeps the newer episode version when two arrive in one batch, comparing times, not text', async () => {
    const t = await createTestDb();
    try {
      const v1 = episodeWith({ event_id: 'a', occurred_at: '2026-11-20T10:00:00Z' });
      v1.episode.title = 'old';
      const v2 = episodeWith({ event_id: 'b', occurred_at: '2026-11-20T10:00:00.500Z' });
      v2.episode.title = 'new';
      const recorded = (id: string, revision: number, data: unknown) => ({
        id,
        streamId: 'episode-ep-1',
        revision,
        position: `1/${revision + 1}`,
        type: 'EpisodeTranscribed',
        data,
        metadata: {},
        recordedAt: new Date(),
      });
      await t.db.transaction((tx) =>
        episodesProjection.apply(tx, [recorded('a', 0, v1), recorded('b', 1, v2)]),
      );
      const { rows } = await t.db.query<{ title: string }>(
        "select payload->'episode'->>'title' as title from episodes",
      );
      expect(rows[0]?.title).toBe('new');
    } finally {
      await t.drop();
    }
  });

  it('puts a match committed behind an open transaction into its digest rather than closing the window without it', async () => {
    const f = await deliveryFixture();
    const other = new pg.Client({ connectionString: TEST_DATABASE_URL });
    try {
      f.clock.set('2026-11-20T10:00:00Z');
      const alert = await f.createAlert({
        delivery_cadence: 'DAILY',
        notifications: [{ type: 'WEBHOOK', webhook_connection_id: f.webhook.id }],
      });
      const first = await f.match(alert.id);
      await f.fanOut();
      // Another session on the server holds a transaction id open.
      await other.connect();
      await other.query('begin');
      await other.query('select pg_current_xact_id()');
      f.clock.set('2026-11-20T23:59:50Z');
      const late = await f.match(alert.id);
      f.clock.set('2026-11-21T00:00:31Z');
      const schedule = () => scheduleDueDigests({ ...f.fanoutDeps, graceMs: 30_000 });
      await schedule();
      await other.query('commit');
      await catchUpFanout(f.fanoutDeps);
      await schedule();
      await f.project();
      const { rows } = await f.db.query<{ match_id: string }>(
        `select m.match_id from delivery_matches m join deliveries d on d.id = m.delivery_id
          where d.alert_id = $1 and d.type = 'alert.digest'`,
        [alert.id],
      );
      expect(rows.map((r) => r.match_id).sort()).toEqual([first.matchId, late.matchId].sort());
    } finally {
      await other.end().catch(() => {});
      await f.close();
    }
  });

  it('matches a re-sent episode that only now mentions the entity, whether the backfill ran before or after', async () => {
    for (const backfillFirst of [true, false]) {
      const f = await pipelineFixture('postgres');
      try {
        await f.entity('ent-nv', 'Nvidia');
        await f.ingest([
          episodeEvent({
            id: 'ep-x',
            lines: ['Welcome.', 'Nothing here.'],
            occurred_at: '2026-11-20T10:00:00Z',
          }),
        ]);
        await project(f.db, f.store, episodesProjection);
        await runUntilCaughtUp(f.db, f.store, realtimeMatcher(f.deps));
        const alert = (await f.createAlert('ent-nv')) as { id: string };
        await f.projectAll();
        if (backfillFirst) await runUntilCaughtUp(f.db, f.store, backfill(f.deps));
        await f.ingest([
          episodeEvent({
            id: 'ep-x',
            lines: ['Welcome.', 'Today: Nvidia earnings.'],
            occurred_at: '2026-11-20T11:00:00Z',
          }),
        ]);
        await f.projectAll();
        await runUntilCaughtUp(f.db, f.store, realtimeMatcher(f.deps));
        if (!backfillFirst) await runUntilCaughtUp(f.db, f.store, backfill(f.deps));
        const matches = (await f.matches()).filter((m) => m.data.alertId === alert.id);
        expect(matches).toHaveLength(1);
        expect(matches[0]!.data.isBackfilled).toBe(true);
      } finally {
        await f.close();
      }
    }
  });
});
