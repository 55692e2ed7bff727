/** Deterministic synthetic data shared by tests and benchmarks. */

/** A small seeded PRNG (mulberry32): the same sequence for the same seed, every run. */
export function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Words generated show titles are made of: "<adjective> <noun> <suffix>". */
export const ADJECTIVES = [
  'Curious',
  'Daily',
  'Hidden',
  'Modern',
  'Quiet',
  'Radical',
  'Brave',
  'Lazy',
  'Golden',
  'Wild',
  'Deep',
  'Silent',
  'Happy',
  'Honest',
  'Weekly',
  'Tiny',
  'Electric',
  'Cosmic',
  'Urban',
  'Rural',
];
export const NOUNS = [
  'Minds',
  'Startup',
  'History',
  'Science',
  'Kitchen',
  'Money',
  'Garden',
  'Football',
  'Design',
  'Cinema',
  'Music',
  'Health',
  'Politics',
  'Travel',
  'Crime',
  'Comedy',
  'Tech',
  'Parenting',
  'Chess',
  'Poetry',
  'Climate',
  'Markets',
  'Space',
  'Ocean',
  'Philosophy',
];
export const SUFFIXES = [
  'Hour',
  'Show',
  'Podcast',
  'Radio',
  'Talks',
  'Stories',
  'Weekly',
  'Club',
  'Lab',
  'Diaries',
  'Files',
  'Report',
];
