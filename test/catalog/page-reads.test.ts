import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEpisodes } from '../../projections/catalog-episodes/queries.ts';
import { type ClipRow, listClips } from '../../projections/clips/queries.ts';
import { podcastIdsByDirectory } from '../../projections/podcasts/queries.ts';
import { listSegments } from '../../projections/segments/queries.ts';
import { INT4_MAX } from '../../src/catalog/params.ts';
import { SEGMENT_TYPES } from '../../src/catalog/segment-clip-routes.ts';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import { rowsRead } from '../support/rows-read.ts';
import { type CatalogHarness, catalogHarness, episodeOf, podcastEvent } from './support.ts';

// What a page reads (docs/catalog.md): a page after a cursor starts at its cursor, and a valid filter
// few rows match reads those rows, not the whole table. Each check runs the route's statement under
// EXPLAIN ANALYZE on a catalog whose statistics are up to date, and counts the rows its scans of
// the table read (returned or removed by a filter).

const EPISODES = 12;
const PARTS = 400;
// DEBATE_DISAGREEMENT is left out: a type no clip has.
const CLIP_TYPES = ['SPICY', 'CONTROVERSIAL', 'EMOTIONAL', 'FUNNY', 'SHOCKING', 'INSIGHTFUL', 'INFORMATIVE'];

function episodeWithParts(e: number): EpisodeTranscribed {
  const id = `ep-${e}`;
  const event = episodeOf({
    id,
    podcastId: `pod-${e % 3}`,
    publishedAt: new Date(Date.parse('2026-11-01T00:00:00Z') - e * 3_600_000).toISOString(),
    roles: ['HOST', 'GUEST', 'GUEST'],
  });
  return {
    ...event,
    speakers: event.speakers!.map((s, k) => (k === 0 ? { ...s, entity_id: 'ent-host' } : s)),
    segments: Array.from({ length: PARTS }, (_, k) => ({
      id: `${id}-seg${k}`,
      title: `Segment ${k}`,
      type: SEGMENT_TYPES[k % SEGMENT_TYPES.length] as 'INTRO',
      number: k + 1,
      start_seconds: k,
      end_seconds: k + 1,
    })),
    clips: Array.from({ length: PARTS }, (_, k) => ({
      id: `${id}-clip${k}`,
      title: `Clip ${k}`,
      type: CLIP_TYPES[k % CLIP_TYPES.length] as 'SPICY',
      start_seconds: k,
      end_seconds: k + 1,
      engagement_score: (k * 37 + e) % 101,
      speaker_id: `${id}-s${k % 3}`,
    })),
  };
}

describe('what a catalog page reads', () => {
  let h: CatalogHarness;

  beforeAll(async () => {
    h = await catalogHarness('postgres');
    await h.ingest([
      ...Array.from({ length: EPISODES }, (_, e) => episodeWithParts(e)),
      ...Array.from({ length: 1500 }, (_, e) =>
        episodeOf({
          id: `short-${e}`,
          podcastId: `pod-${e % 50}`,
          publishedAt: new Date(Date.parse('2026-10-01T00:00:00Z') - e * 60_000).toISOString(),
          durationSeconds: 600 + (e % 3000),
        }),
      ),
      ...Array.from({ length: 1500 }, (_, p) =>
        podcastEvent({
          id: `show-${p}`,
          title: `Show ${p}`,
          directory_ids: { apple: String(1_000_000 + p), spotify: `sp${p}` },
        }),
      ),
    ]);
    await h.db.query('vacuum analyze segments, clips, catalog_episodes, podcasts');
  }, 120_000);
  afterAll(() => h?.close());

  it('starts a segments page after a cursor at its cursor, with the same segments as one read in order', async () => {
    const all = await listSegments(h.db, { type: 'INTRO' }, 10_000);
    for (const depth of [100, 300, 600]) {
      const at = all[depth - 1]!;
      const position = { p: at.published_position, e: at.episode_id, n: at.number, i: at.id };
      const { read, conditions, answer } = await rowsRead(h.db, 'segments', (db) =>
        listSegments(db, { type: 'INTRO' }, 26, position),
      );
      expect(answer.map((s) => s.id)).toEqual(all.slice(depth, depth + 26).map((s) => s.id));
      // the index scan starts at the cursor's instant: none of the segments before it is read
      expect(conditions).toEqual([expect.stringContaining('(published_at <= ')]);
      expect(read).toBeLessThanOrEqual(all.filter((s) => s.published_at <= at.published_at).length);
    }
  });

  it('reads a clips page after a cursor from its cursor: the rest of its score, then lower scores', async () => {
    const all = await listClips(h.db, {}, 10_000);
    const at = all[3000]!;
    const { read, answer } = await rowsRead(h.db, 'clips', (db) =>
      listClips(db, {}, 26, { s: at.engagement_score, i: at.id }),
    );
    expect(answer.map((c) => c.id)).toEqual(all.slice(3001, 3027).map((c) => c.id));
    // each of the two ranges reads at most the page, or the rest of the cursor's score
    const restOfScore = all.filter((c) => c.engagement_score === at.engagement_score && c.id > at.id).length;
    expect(read).toBeLessThanOrEqual(26 + Math.max(26, restOfScore));

    const ofType = await listClips(h.db, { type: 'FUNNY' }, 10_000);
    const paged: ClipRow[] = [];
    for (let after: ClipRow | undefined; paged.length < ofType.length; ) {
      const page = await listClips(
        h.db,
        { type: 'FUNNY' },
        100,
        after && { s: after.engagement_score, i: after.id },
      );
      if (page.length === 0) break;
      paged.push(...page);
      after = page.at(-1);
    }
    expect(paged.map((c) => c.id)).toEqual(ofType.map((c) => c.id));
  });

  it('reads only the clips of a speaker, and none for a speaker or a type no clip has', async () => {
    for (const filter of [{ speakerIds: ['nobody'] }, { type: 'DEBATE_DISAGREEMENT' }]) {
      const { read, answer } = await rowsRead(h.db, 'clips', (db) => listClips(db, filter, 26));
      expect(answer).toEqual([]);
      expect(read).toBe(0);
    }
    const speaker = await rowsRead(h.db, 'clips', (db) => listClips(db, { speakerIds: ['ep-4-s1'] }, 200));
    const expected = Array.from({ length: PARTS }, (_, k) => k).filter((k) => k % 3 === 1);
    expect(speaker.answer.map((c) => c.id).sort()).toEqual(expected.map((k) => `ep-4-clip${k}`).sort());
    expect(speaker.read).toBeLessThanOrEqual(expected.length);
    // by the speaker's entity (the host of every episode) as by its producer id
    const host = await listClips(h.db, { speakerIds: ['ent-host'] }, 10_000);
    expect(host).toHaveLength(EPISODES * Math.ceil(PARTS / 3));
    expect(host.every((c) => c.speaker?.entity_id === 'ent-host')).toBe(true);
  });

  it('looks up directory ids by index, one look-up an identifier', async () => {
    const identifiers = Array.from({ length: 100 }, (_, k) => (k % 2 ? `sp${k * 13}` : `unknown-${k}`));
    const { read, scans, answer } = await rowsRead(h.db, 'podcasts', (db) =>
      podcastIdsByDirectory(db, 'spotify', identifiers),
    );
    expect(answer).toEqual(
      new Map(identifiers.filter((_, k) => k % 2).map((id) => [id, `show-${id.slice(2)}`])),
    );
    expect(scans).toEqual(['Bitmap Heap Scan']);
    expect(read).toBeLessThanOrEqual(identifiers.length);
    const lookup = await h.get('/v1/podcasts/lookup', { platform: 'spotify', identifier: 'sp7,nope,sp7' });
    expect(lookup.json().results.map((r: { podcast?: { id: string } }) => r.podcast?.id)).toEqual([
      'show-7',
      undefined,
      'show-7',
    ]);
  });

  it('reads no episode for a duration no episode has', async () => {
    for (const filter of [{ minDuration: INT4_MAX }, { maxDuration: 0 }]) {
      const { read, answer } = await rowsRead(h.db, 'catalog_episodes', (db) => listEpisodes(db, filter, 26));
      expect(answer).toEqual([]);
      expect(read).toBe(0);
    }
    // the episodes with segments and clips are the hour-long ones
    const long = await listEpisodes(h.db, { minDuration: 3600 }, 100);
    expect(long.map((e) => e.id)).toEqual(Array.from({ length: EPISODES }, (_, e) => `ep-${e}`));
  });
});
