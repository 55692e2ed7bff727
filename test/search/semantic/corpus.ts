import type { EpisodeTranscribed } from '../../../src/ingestion/events.ts';
import { episodeEvent } from '../../fixtures/events.ts';
import { prng } from '../../support/synthetic.ts';
import { PAIRS } from './paraphrases.ts';

/** Podcast small talk that surrounds every passage. */
const CHATTER = [
  'Welcome back to the show, everybody.',
  'Before we start, a quick word from our sponsor.',
  'Thanks so much for listening, see you next week.',
  'Let us take a short break and come right back.',
  'If you enjoy this, leave us a review.',
  'That was a great question from a listener.',
  'I totally agree with what you just said.',
  'Anyway, where were we?',
];
const SUBJECTS = [
  'The mayor',
  'My neighbor',
  'A senator',
  'The coach',
  'Our producer',
  'The professor',
  'A farmer',
  'The chef',
  'My cousin',
  'The pilot',
  'A lawyer',
  'The artist',
];
const VERBS = [
  'talked about',
  'complained about',
  'wrote a report on',
  'asked me about',
  'gave a speech on',
  'made a joke about',
  'spent the day on',
  'argued over',
];
const OBJECTS = [
  'the new stadium',
  'the city budget',
  'a local bakery',
  'the school board',
  'an old bridge',
  'the county fair',
  'a bicycle lane',
  'the museum opening',
  'a parking garage',
  'the library hours',
  'the river cleanup',
  'a jazz festival',
  'the train schedule',
  'a painting class',
  'the farmers market',
  'a charity auction',
];

/** A line of small talk or a sentence about everyday local news, from a seeded generator. */
function filler(random: () => number): string {
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  return random() < 0.3 ? pick(CHATTER) : `${pick(SUBJECTS)} ${pick(VERBS)} ${pick(OBJECTS)}.`;
}

export const relevantEpisodeId = (i: number) => `rel-${i}`;

/**
 * One episode per relevance pair (its passage in lines 6–10 among small talk) and `distractors`
 * episodes of small talk and local news, published over the two years before 2026-11-01.
 */
export function relevanceCorpus(distractors: number): EpisodeTranscribed[] {
  const random = prng(7);
  const episodes: EpisodeTranscribed[] = [];
  const day = (i: number) =>
    new Date(Date.parse('2026-11-01T00:00:00Z') - (i % 700) * 86_400_000).toISOString();
  PAIRS.forEach((pair, i) => {
    const lines = [
      ...Array.from({ length: 5 }, () => filler(random)),
      ...pair.passage,
      ...Array.from({ length: 5 - pair.passage.length }, () => filler(random)),
      ...Array.from({ length: 5 }, () => filler(random)),
    ];
    episodes.push(episodeEvent({ id: relevantEpisodeId(i), publishedAt: day(i * 13), lines }));
  });
  for (let d = 0; d < distractors; d++)
    episodes.push(
      episodeEvent({
        id: `noise-${d}`,
        publishedAt: day(d * 7 + 3),
        lines: Array.from({ length: 15 }, () => filler(random)),
      }),
    );
  return episodes;
}
