import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { podcastLinksProjection } from '../../projections/podcast-links/projection.ts';
import type { Db, Queryable } from '../../src/db/db.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import { createTestDb } from '../support/db.ts';
import { prng } from '../support/synthetic.ts';

// podcast_links takes each batch's changes instead of recounting the shows it touches
// (docs/advertising.md, "Read models and worker"): it must hold what a full recount gives.

let db: Db;
let drop: () => Promise<void>;
beforeAll(async () => {
  ({ db, drop } = await createTestDb());
});
afterAll(() => drop());

let position = 0;
const recorded = (data: EpisodeTranscribed): RecordedEvent => {
  position += 1;
  return {
    id: `ev-${position}`,
    streamId: `episode-${data.episode.id}`,
    revision: 0,
    position: String(position),
    type: 'EpisodeTranscribed',
    data,
    metadata: {},
    recordedAt: new Date(),
  };
};
const apply = (events: EpisodeTranscribed[]) =>
  db.transaction((tx) => podcastLinksProjection.apply(tx, events.map(recorded)));

interface Spec {
  id: string;
  podcast: string;
  publishedAt: string;
  occurredAt: string;
  guests?: [string, string][];
  sponsors?: [string, string, boolean?][];
  topics?: [string, string][];
}
const episode = (s: Spec): EpisodeTranscribed => ({
  type: 'episode.transcribed',
  event_id: `e-${s.id}-${s.occurredAt}`,
  occurred_at: s.occurredAt,
  podcast: { id: s.podcast, title: s.podcast },
  episode: {
    id: s.id,
    title: s.id,
    published_at: s.publishedAt,
    duration_seconds: 60,
    topics: (s.topics ?? []).map(([id, name]) => ({ id, name, ancestry: `${id[0]}/${id}` })),
  },
  speakers: (s.guests ?? []).map(([id, name]) => ({ name, role: 'GUEST', person_id: id })),
  ads: (s.sponsors ?? []).map(([id, name, promo], i) => ({
    id: `${s.id}-ad${i}`,
    sponsor: { id, name },
    ...(promo ? { is_network_promo: true } : {}),
  })),
});

const stored = async () =>
  (
    await db.query<{ r: string }>(
      `select concat_ws('|', podcast_id, kind, key, label, episode_count, last_at::text) as r
         from podcast_links order by 1`,
    )
  ).rows.map((x) => x.r);
const recounted = async () =>
  (
    await db.query<{ r: string }>(
      `select concat_ws('|', podcast_id, kind, key, max(label), count(*), max(published_at)::text) as r
         from podcast_link_episodes group by podcast_id, kind, key order by 1`,
    )
  ).rows.map((x) => x.r);

describe('podcast_links counts a batch into the shows it touches', () => {
  it('holds what a full recount gives, through new episodes, re-sends, moves, late older versions and promos', async () => {
    const rnd = prng(262);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
    const some = <T>(xs: readonly T[], max: number) => [
      ...new Set(Array.from({ length: Math.floor(rnd() * (max + 1)) }, () => pick(xs))),
    ];
    const keys = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    // Few keys, labels and dates, so rows are shared, maxima tie and re-sends lower and raise them;
    // one date carries microseconds, which a JavaScript Date would drop.
    const labels = ['Ann', 'ann', 'Bob', 'Zoë', 'Åsa', 'zed'];
    const dates = [
      '2026-01-01T00:00:00Z',
      '2026-02-01T00:00:00Z',
      '2026-02-01T00:00:00.000001Z',
      '2026-03-01T00:00:00Z',
    ];
    const spec = (id: string, occurredAt: string): Spec => ({
      id,
      podcast: pick(['A', 'B', 'C']),
      publishedAt: pick(dates),
      occurredAt,
      guests: some(keys('g', 4), 3).map((k) => [k, pick(labels)]),
      sponsors: some(keys('s', 4), 3).map((k) => [k, pick(labels), rnd() < 0.2]),
      topics: some(keys('t', 5), 3).map((k) => [k, pick(labels)]),
    });
    for (let batch = 0; batch < 60; batch++) {
      const occurred = new Date(Date.UTC(2026, 10, 1, 0, batch)).toISOString();
      const older = new Date(Date.UTC(2026, 9, 1, 0, batch)).toISOString();
      const events = Array.from({ length: 1 + Math.floor(rnd() * 4) }, () =>
        spec(pick(keys('ep', 12)), rnd() < 0.15 ? older : occurred),
      );
      await apply(events.map(episode));
      expect(await stored(), `batch ${batch}`).toEqual(await recounted());
    }
  });

  it('writes only the rows of the keys an episode changes, however many the show has', async () => {
    const topics = (n: number) => Array.from({ length: n }, (_, i): [string, string] => [`big${i}`, 'Topic']);
    const events = Array.from({ length: 40 }, (_, i) =>
      episode({
        id: `big-ep${i}`,
        podcast: 'Big',
        publishedAt: '2026-04-01T00:00:00Z',
        occurredAt: '2026-11-01T00:00:00Z',
        guests: [[`big-guest${i}`, 'Guest']],
        topics: topics(50),
      }),
    );
    await apply(events);
    // Rows written in podcast_links, read in the transaction: the counters include earlier
    // transactions of the connection not yet reported, so the count is the difference.
    const touched = (tx: Queryable) =>
      tx
        .query<{ n: number }>(
          `select (n_tup_ins + n_tup_upd + n_tup_del)::int as n from pg_stat_xact_user_tables
            where relname = 'podcast_links' and schemaname = current_schema()`,
        )
        .then((r) => r.rows[0]!.n);
    const written = await db.transaction(async (tx) => {
      const before = await touched(tx);
      await podcastLinksProjection.apply(tx, [
        recorded(
          episode({
            id: 'big-new',
            podcast: 'Big',
            publishedAt: '2026-05-01T00:00:00Z',
            occurredAt: '2026-11-01T00:00:00Z',
            guests: [['big-guest-new', 'Guest']],
            topics: topics(2),
          }),
        ),
      ]);
      return (await touched(tx)) - before;
    });
    // The show holds 40 guests, 50 topics and their one category; the episode adds a guest and
    // counts itself into two topics and the category (a recount of the show deleted 91 rows and
    // wrote 92).
    expect(written).toBe(4);
    expect(await stored()).toEqual(await recounted());
  });
});
