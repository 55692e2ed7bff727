import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdvertisingHarness, advertisingHarness, episodeWith } from './support.ts';

let h: AdvertisingHarness;
beforeAll(async () => {
  h = await advertisingHarness();
});
afterAll(() => h.close());

const links = async (podcast: string) =>
  (
    await h.db.query<{ kind: string; key: string; episode_count: number }>(
      'select kind, key, episode_count from podcast_links where podcast_id = $1 order by kind, key',
      [podcast],
    )
  ).rows.map((r) => `${r.kind}:${r.key}:${r.episode_count}`);

describe('podcast_links read model', () => {
  it("counts each show's guests, sponsors (promos excluded), topics and categories over its episodes", async () => {
    await h.ingest([
      episodeWith({
        id: 'a1',
        podcast: 'A',
        publishedAt: '2026-11-01T00:00:00Z',
        guests: ['g1'],
        topics: ['t1'],
        ads: [{ sponsor: 's1' }, { sponsor: 's2', promo: true }],
      }),
      episodeWith({
        id: 'a2',
        podcast: 'A',
        publishedAt: '2026-11-02T00:00:00Z',
        guests: ['g1', 'g2'],
        topics: ['t1', 'u2'],
      }),
    ]);
    expect(await links('A')).toEqual([
      'category:root-t:2',
      'category:root-u:1',
      'guest:g1:2',
      'guest:g2:1',
      'sponsor:s1:1',
      'topic:t1:2',
      'topic:u2:1',
    ]);
  });

  it('replaces a re-sent episode and recounts the shows it left and joined; an older version changes nothing', async () => {
    await h.ingest([
      episodeWith({
        id: 'a2',
        podcast: 'B',
        publishedAt: '2026-11-02T00:00:00Z',
        guests: ['g3'],
        occurredAt: '2026-11-21T00:00:00Z',
      }),
    ]);
    expect(await links('A')).toEqual(['category:root-t:1', 'guest:g1:1', 'sponsor:s1:1', 'topic:t1:1']);
    expect(await links('B')).toEqual(['guest:g3:1']);
    await h.ingest([
      episodeWith({
        id: 'a2',
        podcast: 'A',
        publishedAt: '2026-11-02T00:00:00Z',
        guests: ['g9'],
        occurredAt: '2026-11-19T00:00:00Z',
      }),
    ]);
    expect(await links('B')).toEqual(['guest:g3:1']);
  });
});
