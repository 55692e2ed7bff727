import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatLabels, guestFrequency } from '../../src/catalog/format-rules.ts';
import { type CatalogHarness, catalogHarness, type EpisodeSpec, episodeOf, NOW } from './support.ts';

const daysAgo = (days: number) => new Date(NOW.getTime() - days * 86_400_000).toISOString();

describe('format rules', () => {
  it('bands the guest rate: never at 0, rare below 0.2, occasional below 0.5, regular below 0.8, else always', () => {
    expect([0, 0.01, 0.19, 0.2, 0.49, 0.5, 0.79, 0.8, 1].map(guestFrequency)).toEqual([
      'never',
      'rare',
      'rare',
      'occasional',
      'occasional',
      'regular',
      'regular',
      'always',
      'always',
    ]);
  });

  it('gives signals at guest ≥ 0.5, panel ≥ 0.5, call-in ≥ 0.3 and one speaker ≥ 0.5', () => {
    const counts = { analyzed: 10, guest: 5, panel: 5, callIn: 3, ads: 0, solo: 5 };
    expect(formatLabels(counts).signals).toEqual(['interview', 'panel', 'call_in', 'solo_narrated']);
    expect(formatLabels({ analyzed: 10, guest: 4, panel: 4, callIn: 2, ads: 0, solo: 4 }).signals).toEqual(
      [],
    );
  });

  it('omits guest frequency and signals below 5 analyzed episodes, and says has_ads false only from 5', () => {
    expect(formatLabels({ analyzed: 4, guest: 4, panel: 0, callIn: 0, ads: 0, solo: 0 })).toEqual({
      rates: { guest: 1, panel: 0, callIn: 0, ads: 0, solo: 0 },
      signals: [],
    });
    expect(formatLabels({ analyzed: 4, guest: 0, panel: 0, callIn: 0, ads: 1, solo: 0 }).hasAds).toBe(true);
    expect(formatLabels({ analyzed: 5, guest: 0, panel: 0, callIn: 0, ads: 0, solo: 0 }).hasAds).toBe(false);
    expect(formatLabels({ analyzed: 0, guest: 0, panel: 0, callIn: 0, ads: 0, solo: 0 }).rates.guest).toBe(0);
  });
});

describe('format profiles computed from hand-built episode sets', () => {
  let h: CatalogHarness;

  beforeAll(async () => {
    h = await catalogHarness('postgres');
    const weekly: EpisodeSpec[] = [
      // 13 weekly episodes, the first 84 days ago: 13 in the trailing 90 days = 1.01 a week.
      ...Array.from({ length: 13 }, (_, i) => ({
        id: `wk-${i}`,
        podcastId: 'pod-weekly',
        publishedAt: daysAgo(84 - i * 7),
        durationSeconds: (30 + i * 5) * 60,
        roles:
          i < 4
            ? ['HOST', 'GUEST']
            : i < 6
              ? ['HOST', 'PANELIST']
              : i < 8
                ? ['HOST', 'GUEST', 'GUEST', 'CALLER']
                : i < 12
                  ? ['HOST']
                  : [],
        ads: i % 2,
        videos: i === 3 ? 1 : 0,
      })),
      // an old episode outside the window, with no transcript and no known duration
      { id: 'wk-old', podcastId: 'pod-weekly', publishedAt: daysAgo(400), durationSeconds: 0 },
    ];
    await h.ingest([
      ...weekly.map(episodeOf),
      ...[2, 5, 9].map((d) =>
        episodeOf({ id: `new-${d}`, podcastId: 'pod-new', publishedAt: daysAgo(d), roles: ['HOST'] }),
      ),
      episodeOf({ id: 'old-1', podcastId: 'pod-old', publishedAt: daysAgo(200), roles: ['HOST', 'GUEST'] }),
    ]);
  });
  afterAll(() => h.close());

  it('computes the rates, bands, signals, minutes, publish days and episodes per week of a weekly show', async () => {
    const res = await h.get('/v1/podcasts/pod-weekly/format');
    expect(res.statusCode).toBe(200);
    const f = res.json();
    expect(f).toMatchObject({
      episode_count: 14,
      analyzed_episodes: 12,
      guest_episode_rate: 0.5, // 4 interviews + 2 call-in shows with guests, of 12
      panel_episode_rate: 0.3333, // 2 with a panelist + 2 with three non-hosts
      call_in_episode_rate: 0.1667,
      ad_episode_rate: 0.5,
      has_video: true,
      guest_frequency: 'regular',
      has_ads: true,
      publishing_status: 'active',
      signals: ['interview'],
      episodes_per_week: 1.01,
      first_episode_published_at: daysAgo(400),
      latest_episode_published_at: daysAgo(0),
    });
    // 13 known durations 30..90 minutes (the 0 of wk-old is unknown)
    expect(f.avg_episode_minutes).toBe(60);
    expect(f.episode_minutes_median).toBe(60);
    expect(f.episode_minutes_p25).toBe(45);
    expect(f.episode_minutes_p75).toBe(75);
    const days = Object.values(f.publish_days as Record<string, number>);
    expect(days.reduce((a, b) => a + b, 0)).toBe(14);
    expect(Object.keys(f.publish_days)).toEqual([
      'monday',
      'tuesday',
      'wednesday',
      'thursday',
      'friday',
      'saturday',
      'sunday',
    ]);
    expect(f.publish_days.friday).toBe(13); // NOW is a Friday: every weekly episode fell on one
    expect(Date.parse(f.computed_at)).not.toBeNaN();
  });

  it('keeps a briefly tracked show profiled but without episodes per week, and out of the per-week filters', async () => {
    const f = (await h.get('/v1/podcasts/pod-new/format')).json();
    expect(f).toMatchObject({ episode_count: 3, analyzed_episodes: 3, publishing_status: 'active' });
    expect(f.episodes_per_week).toBeUndefined();
    expect(f.guest_frequency).toBeUndefined(); // 3 analyzed: too few
    expect(f.has_ads).toBeUndefined();
    expect(f.signals).toBeUndefined();
    const ids = (await h.get('/v1/podcasts', { min_episodes_per_week: '0' }))
      .json()
      .data.map((p: { id: string }) => p.id);
    expect(ids).toEqual(['pod-old', 'pod-weekly']);
  });

  it('marks a show dormant with no episode in the last 90 days', async () => {
    const f = (await h.get('/v1/podcasts/pod-old/format')).json();
    expect(f).toMatchObject({ publishing_status: 'dormant', episodes_per_week: 0, guest_episode_rate: 1 });
    const perWeek = (await h.get('/v1/podcasts', { min_episodes_per_week: '1' })).json();
    expect(perWeek.data.map((p: { id: string }) => p.id)).toEqual(['pod-weekly']);
  });

  it('recomputes both shows when an episode moves to another podcast', async () => {
    await h.ingest([
      episodeOf({
        id: 'old-1',
        podcastId: 'pod-new',
        publishedAt: daysAgo(200),
        roles: ['HOST'],
        occurredAt: '2026-11-20T11:00:00Z',
      }),
    ]);
    expect((await h.get('/v1/podcasts/pod-old/format')).json().error_code).toBe('format_not_computed');
    const moved = (await h.get('/v1/podcasts/pod-new/format')).json();
    expect(moved.episode_count).toBe(4);
    expect(moved.episodes_per_week).toBe(0.23); // 3 in the window; no longer briefly tracked
  });
});
