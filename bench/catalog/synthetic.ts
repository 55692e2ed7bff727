// A generated catalog: shows with word-list titles, weekly-ish episodes, some transcribed.

import type { PodcastUpserted } from '../../src/ingestion/catalog-events.ts';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import type { RankingCaptured } from '../../src/ingestion/ranking-captured.ts';
import { ADJECTIVES, NOUNS, prng, SUFFIXES } from '../../test/support/synthetic.ts';

const random = prng(2026);
const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;

const NAMES = [
  'Anna',
  'Marco',
  'Lena',
  'Tomás',
  'Chloé',
  'Bjorn',
  'Priya',
  'Kofi',
  'Sofia',
  'Yuki',
  'Mateo',
  'Zoë',
  'Oskar',
  'Inès',
  'Ravi',
];
const ROOTS = ['technology', 'science', 'business', 'culture', 'sports'];
const TOPICS = ROOTS.flatMap((root) =>
  ['news', 'interviews', 'history', 'deep-dives', 'reviews', 'careers'].map((leaf) => ({
    id: `topic-${root}-${leaf}`,
    name: `${root} ${leaf}`,
    slug: leaf,
    ancestry: `${root}/${leaf}`,
  })),
);
const ROLES = [['HOST'], ['HOST', 'GUEST'], ['HOST', 'GUEST', 'GUEST', 'PANELIST'], ['HOST', 'CALLER']];
const WORDS =
  'the chip market moved again this week and we talk about fabs supply chains models and what it means for everyone listening today'.split(
    ' ',
  );

/** Show i's title, the same every time it is asked for (podcast events and episodes' podcast blocks agree). */
export function podcastTitle(i: number) {
  const r = prng(i + 1);
  const of = <T>(items: readonly T[]) => items[Math.floor(r() * items.length)]!;
  const title = `${of(ADJECTIVES)} ${of(NOUNS)} ${of(SUFFIXES)}`;
  return i % 3 === 0 ? `${title} with ${of(NAMES)}` : i % 3 === 1 ? `The ${title}` : title;
}

export function podcastEvent(i: number): PodcastUpserted {
  return {
    type: 'podcast.upserted',
    event_id: `bench-pod-${i}`,
    occurred_at: '2026-11-01T00:00:00Z',
    podcast: {
      id: `pod-${i}`,
      title: podcastTitle(i),
      slug: `pod-${i}`,
      description: `A show about ${pick(NOUNS).toLowerCase()} and ${pick(NOUNS).toLowerCase()}.`,
      language: pick(['en', 'en-US', 'fr', 'de', 'es']),
      popularity: i % 4 === 0 ? undefined : Math.round(random() * 1000) / 1000,
      suitability_tier: pick(['SAFE', 'SAFE', 'LIMITED', 'SENSITIVE']),
      directory_ids: { apple: String(1_000_000 + i) },
      publisher: { id: `pub-${i % 300}`, name: `Publisher ${i % 300}` },
    },
  };
}

export function episodeEvent(podcast: number, n: number, lines: number, now: Date): EpisodeTranscribed {
  const id = `ep-${podcast}-${n}`;
  const roles = pick(ROLES);
  const published = new Date(now.getTime() - (n * 7 + (podcast % 7)) * 86_400_000 - 3_600_000);
  return {
    type: 'episode.transcribed',
    event_id: `bench-${id}`,
    occurred_at: '2026-11-02T00:00:00Z',
    podcast: { id: `pod-${podcast}`, title: podcastTitle(podcast) },
    episode: {
      id,
      slug: id,
      title: `${pick(ADJECTIVES)} ${pick(NOUNS).toLowerCase()} with ${pick(NAMES)}, part ${n}`,
      published_at: published.toISOString(),
      duration_seconds: 600 + Math.floor(random() * 5400),
      language: 'en',
      topics: [pick(TOPICS), ...(random() < 0.3 ? [pick(TOPICS)] : [])].filter(
        (t, k, all) => all.indexOf(t) === k,
      ),
    },
    speakers: roles.map((role, k) => ({ id: `${id}-s${k}`, name: `${pick(NAMES)} ${k}`, role })),
    ...(lines > 0
      ? {
          transcript: {
            language: 'en',
            lines: Array.from({ length: lines }, (_, k) => ({
              number: k + 1,
              speaker_id: `${id}-s${k % roles.length}`,
              start_seconds: k * 6,
              end_seconds: k * 6 + 5.5,
              text: Array.from({ length: 12 }, () => pick(WORDS)).join(' '),
            })),
          },
          segments: [
            {
              id: `${id}-seg1`,
              title: 'Intro',
              type: 'INTRO',
              number: 1,
              start_line: 1,
              end_line: Math.min(lines, 5),
            },
          ],
          clips: [
            {
              id: `${id}-clip1`,
              title: 'Best bit',
              start_seconds: 6,
              end_seconds: 30,
              engagement_score: Math.floor(random() * 100),
              speaker_id: `${id}-s0`,
            },
          ],
          ...(random() < 0.5
            ? {
                ads: [
                  {
                    id: `${id}-ad1`,
                    sponsor: { id: 'sp-1', name: 'Squarespace' },
                    read_type: 'HOST_READ' as const,
                  },
                ],
              }
            : {}),
        }
      : {}),
  };
}

/**
 * Apple charts (the overall chart and `charts - 1` categories), one capture a day for `days` days,
 * `entries` shows each, so podcast references carry a best rank: shows spread over the catalog
 * (every fourth entry named by its Apple id only), show 0 on every capture.
 */
export function* rankingEvents(
  podcasts: number,
  now: Date,
  { charts = 50, days = 30, entries = 200 } = {},
): Generator<RankingCaptured> {
  for (let c = 0; c < charts; c++)
    for (let d = 0; d < days; d++) {
      const capturedAt = new Date(now.getTime() - d * 86_400_000).toISOString();
      const offset = (c * 997 + d * 13) % podcasts;
      // A step coprime with the catalog's size visits distinct shows; show 0 gets rank c % entries + 1.
      const shows = [0];
      for (let k = 1; shows.length < Math.min(entries, podcasts); k++) {
        const show = (offset + k * 7) % podcasts;
        if (show !== 0) shows.push(show);
      }
      const first = shows.shift()!;
      shows.splice(c % shows.length, 0, first);
      yield {
        type: 'ranking.captured',
        event_id: `bench-chart-${c}-${d}`,
        occurred_at: capturedAt,
        chart: {
          source: 'apple',
          chart_type: 'top_podcasts',
          country: 'us',
          ...(c === 0 ? {} : { category: { slug: `category-${c}`, name: `Category ${c}` } }),
        },
        captured_at: capturedAt,
        entries: shows.map((show, r) => ({
          rank: r + 1,
          ...(r % 4 === 3 ? {} : { podcast_id: `pod-${show}` }),
          external_id: String(1_000_000 + show),
          show: { name: podcastTitle(show) },
        })),
      };
    }
}
