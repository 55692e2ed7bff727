import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { podcastFormatsProjection } from '../../projections/podcast-formats/projection.ts';
import { podcastsProjection } from '../../projections/podcasts/projection.ts';
import type { Db, Queryable } from '../../src/db/db.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { type CatalogHarness, catalogHarness, episodeOf, podcastEvent } from './support.ts';

/**
 * Runs `work` in a transaction of its own on `db`, and resolves once that transaction waits for a
 * lock (`waited`; seen in pg_locks, not after a fixed time, which a loaded machine can let pass before
 * it gets that far) or has ended; `done` is the transaction.
 */
async function untilWaiting<T>(db: Db, work: (tx: Queryable) => Promise<T>) {
  let pid: number | undefined;
  const done = db.transaction(async (tx) => {
    pid = (await tx.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    return work(tx);
  });
  let ended = false;
  void done.then(
    () => (ended = true),
    () => (ended = true),
  );
  const waiting = async () =>
    pid !== undefined &&
    (await db.query('select 1 from pg_locks where pid = $1 and not granted', [pid])).rows.length > 0;
  for (;;) {
    const waited = await waiting();
    if (waited || ended) return { done, waited };
    await sleep(10);
  }
}

// PostgreSQL only: the projections that write the list's sources run on connections of their own
// there; PGlite has one connection, so its transactions never overlap.
describe('the podcast list read model under concurrent writers (postgres)', () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb({ max: 3 });
  });
  afterAll(() => t.drop());

  const insertShow = (tx: Queryable, id: string) =>
    tx.query(
      `insert into podcasts (id, title, search_title, field_times, language, popularity)
       values ($1, $1, $1, '{}', 'en', 0.5)`,
      [id],
    );
  const insertFormat = (tx: Queryable, id: string) =>
    tx.query(
      `insert into podcast_formats (podcast_id, episode_count, analyzed_episodes, ad_episode_rate,
              call_in_episode_rate, guest_episode_rate, panel_episode_rate, solo_episode_rate, has_video,
              publish_days, first_episode_published_at, latest_episode_published_at, guest_frequency,
              has_ads, signals, computed_at)
       values ($1, 4, 4, 1, 0, 0, 0, 1, true, '[]', '2026-01-01Z', '2026-11-01Z', 'never', true, '{solo}', now())`,
      [id],
    );
  const listRow = async (id: string) =>
    (
      await t.db.query<{ has_video: boolean; has_ads: boolean | null; popularity: number | null }>(
        `select has_video, has_ads, popularity from podcast_list where podcast_id = $1 and ancestry = ''`,
        [id],
      )
    ).rows;

  /**
   * `first` writes in a transaction held open while `second` writes in another one, which must wait
   * for `first`'s locks; `first` commits once `second` waits or has ended.
   */
  const interleave = async (
    first: (tx: Queryable) => Promise<unknown>,
    second: (tx: Queryable) => Promise<unknown>,
  ) => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let wrote = () => {};
    const written = new Promise<void>((resolve) => {
      wrote = resolve;
    });
    const one = t.db.transaction(async (tx) => {
      await first(tx);
      wrote();
      await held;
    });
    await written;
    const { done: two, waited } = await untilWaiting(t.db, second);
    release();
    const [a, b] = await Promise.allSettled([one, two]);
    expect(a.status).toBe('fulfilled');
    expect(b).toMatchObject({ status: 'fulfilled' });
    expect(waited, 'the second writer waits for the first one').toBe(true);
  };

  it('holds a new show whose format profile is written while its row is not yet committed', async () => {
    await interleave(
      (tx) => insertShow(tx, 'pod-new'),
      (tx) => insertFormat(tx, 'pod-new'),
    );
    expect(await listRow('pod-new')).toEqual([{ has_video: true, has_ads: true, popularity: 0.5 }]);
  });

  it('holds both changes when a show and its format profile change at once', async () => {
    await t.db.transaction(async (tx) => {
      await insertShow(tx, 'pod-both');
      await insertFormat(tx, 'pod-both');
    });
    await interleave(
      (tx) => tx.query(`update podcasts set popularity = 0.9 where id = 'pod-both'`),
      (tx) => tx.query(`update podcast_formats set has_ads = false where podcast_id = 'pod-both'`),
    );
    expect(await listRow('pod-both')).toEqual([{ has_video: true, has_ads: false, popularity: 0.9 }]);
  });

  it("takes its schema's locks: a refresh of the same shows in another schema of the database does not wait", async () => {
    const other = await createTestDb({ max: 1 });
    try {
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked = () => {};
      const holding = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const holder = t.db.transaction(async (tx) => {
        await tx.query(`select lock_podcast_list(array['pod-shared', 'absent-1'])`);
        locked();
        await held;
      });
      await holding;
      try {
        // advisory locks belong to the database: keyed by bucket alone (before 0260), this waited
        await other.db.transaction(async (tx) => {
          await tx.query(`set local lock_timeout = '2s'`);
          await tx.query(`select refresh_podcast_list(array['pod-shared', 'absent-1'])`);
        });
      } finally {
        release();
        await holder;
      }
    } finally {
      await other.drop();
    }
  });

  it('refreshes more shows in one transaction than the lock table holds locks (a rebuild)', async () => {
    await t.db.query(
      `select refresh_podcast_list(array(select 'absent-' || n from generate_series(1, 40000) n))`,
    );
    expect(await t.db.query(`select 1 from podcast_list where podcast_id like 'absent-%'`)).toMatchObject({
      rows: [],
    });
  });
});

describe('the projections that write the podcast list, at once (postgres)', () => {
  let h: CatalogHarness;
  let shown: string; // a show with a format profile, locked in a later bucket than `added`
  let added: string; // a show without episodes yet
  const bucket = async (id: string) =>
    (await h.db.query<{ b: number }>('select hashtext($1) & 1023 as b', [id])).rows[0]!.b;

  beforeAll(async () => {
    h = await catalogHarness('postgres');
    for (let n = 0; ; n++)
      if ((await bucket(`pod-x${n}`)) > 512) {
        shown = `pod-x${n}`;
        break;
      }
    const limit = await bucket(shown);
    for (let n = 0; ; n++)
      if ((await bucket(`pod-y${n}`)) < limit) {
        added = `pod-y${n}`;
        break;
      }
    await h.ingest([
      podcastEvent({ id: shown, title: 'Shown' }),
      podcastEvent({ id: added, title: 'Added' }),
      episodeOf({ id: 'x1', podcastId: shown, podcastTitle: 'Shown' }),
    ]);
  });
  afterAll(() => h.close());

  it('do not deadlock when a show gets its first episode as both change', async () => {
    const { lastPosition } = await h.store.readAll();
    await ingestEvents(h.store, [
      podcastEvent({ id: added, title: 'Added', popularity: 0.4 }, '2026-11-20T11:00:00Z'),
      podcastEvent({ id: shown, title: 'Shown', popularity: 0.7 }, '2026-11-20T11:00:00Z'),
      episodeOf({ id: 'y1', podcastId: added, podcastTitle: 'Added', roles: ['HOST', 'GUEST'] }),
      episodeOf({ id: 'x2', podcastId: shown, podcastTitle: 'Shown', roles: ['HOST', 'GUEST'] }),
    ]);
    // "all" lists an event once no transaction older than its own is open anywhere on the server
    // (docs/event-store.md, "Ordering and visibility"): another test file's may still be. Read too
    // early, the batches below would be empty, and the format profiles' would never reach its pause.
    let { events } = await h.store.readAll({ after: lastPosition });
    for (const end = Date.now() + 30_000; events.length < 4 && Date.now() < end; ) {
      await sleep(20);
      ({ events } = await h.store.readAll({ after: lastPosition }));
    }
    expect(events).toHaveLength(4);
    const of = (types: readonly string[]) => events.filter((e) => types.includes(e.type));

    // the format profiles' batch stops after its first statement until the shows' batch waits on it
    let paused = () => {};
    const atPause = new Promise<void>((resolve) => {
      paused = resolve;
    });
    let resume = () => {};
    const resumed = new Promise<void>((resolve) => {
      resume = resolve;
    });
    const formats = h.db.transaction((tx) =>
      podcastFormatsProjection.apply(
        {
          exec: (script) => tx.exec(script),
          async query<R>(text: string, params?: readonly unknown[]) {
            const result = await tx.query<R>(text, params);
            if (text.startsWith('delete from podcast_formats')) {
              paused();
              await resumed;
            }
            return result;
          },
        },
        of(podcastFormatsProjection.eventTypes),
      ),
    );
    const ended = formats.then(
      () => 'ended',
      () => 'ended',
    );
    expect(await Promise.race([atPause.then(() => 'paused'), ended]), 'the format profiles batch').toBe(
      'paused',
    );
    // until the shows' batch waits for a lock (the format profiles' batch holds its shows'), or ends
    const { done: shows } = await untilWaiting(h.db, (tx) =>
      podcastsProjection.apply(tx, of(podcastsProjection.eventTypes)),
    );
    resume();
    expect((await Promise.allSettled([formats, shows])).map((r) => r.status)).toEqual([
      'fulfilled',
      'fulfilled',
    ]);
    const { rows } = await h.db.query(
      `select podcast_id, popularity, first_episode_published_at is not null as profiled from podcast_list
        where ancestry = '' order by podcast_id`,
    );
    expect(rows).toEqual([
      { podcast_id: shown, popularity: 0.7, profiled: true },
      { podcast_id: added, popularity: 0.4, profiled: true },
    ]);
  }, 60_000);
});
