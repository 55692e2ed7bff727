/** The generated catalog and queries of the forgiving-search test set. */
import { ADJECTIVES, NOUNS, prng, SUFFIXES } from '../support/synthetic.ts';
export const random = prng(11);
const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;

const FIRST = [
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
const LAST = [
  'Martin',
  'Okafor',
  'García',
  'Nguyen',
  'Schäfer',
  'Rossi',
  'Dubois',
  'Kowalski',
  'Haddad',
  'Lindqvist',
  'Moreau',
  'Ibáñez',
  'Novak',
  'Fischer',
  'Costa',
];
const FOREIGN = [
  'Café Crème',
  'Les Échos du Matin',
  'Mañana Todo Bien',
  'Über Leben',
  'Crônicas da Cidade',
  'La Pêche Miraculeuse',
  'Élan Vital',
  'Niño Salvaje',
  'Fête de la Musique',
  'Açaí e Companhia',
  'Żywe Słowa',
  'Smörgåsbord Sessions',
];
const TOPICS = [
  'the future of work',
  'raising teenagers',
  'black holes',
  'sourdough bread',
  'the 2008 crisis',
  'urban gardening',
  'chess openings',
  'sleep science',
  'jazz improvisation',
  'ancient Rome',
  'electric cars',
  'marathon training',
  'stoicism',
  'coral reefs',
  'venture capital',
];

function showTitle(i: number): string {
  if (i < FOREIGN.length) return FOREIGN[i]!;
  switch (i % 5) {
    case 0:
      return `The ${pick(ADJECTIVES)} ${pick(NOUNS)} ${pick(SUFFIXES)}`;
    case 1:
      return `${pick(ADJECTIVES)} ${pick(NOUNS)}`;
    case 2:
      return `${pick(FIRST)} ${pick(LAST)} ${pick(SUFFIXES)}`;
    case 3:
      return `${pick(NOUNS)} & ${pick(NOUNS)} ${pick(SUFFIXES)}`;
    default:
      return `${pick(NOUNS)} ${pick(SUFFIXES)} with ${pick(FIRST)}`;
  }
}

export interface Show {
  id: string;
  title: string;
  episodes: string[];
}

export const SHOWS: Show[] = [];
const seen = new Set<string>();
for (let i = 0; SHOWS.length < 600; i++) {
  const title = showTitle(i);
  if (seen.has(title.toLowerCase())) continue;
  seen.add(title.toLowerCase());
  const n = SHOWS.length;
  SHOWS.push({
    id: `show-${n}`,
    title,
    episodes: [0, 1, 2].map(
      () =>
        `${pick(TOPICS).replace(/^./, (c) => c.toUpperCase())} with ${pick(FIRST)} ${pick(LAST)}: ${pick(ADJECTIVES).toLowerCase()} ${pick(NOUNS).toLowerCase()}`,
    ),
  });
}

/** Transformations a searcher makes; each takes a show and gives the query. */
const typo = (s: string, seed: number) => {
  const words = s.split(' ');
  const at = words.reduce((best, w, i) => (w.length > words[best]!.length ? i : best), 0);
  const w = words[at]!;
  const k = 1 + (seed % Math.max(1, w.length - 2));
  words[at] =
    seed % 3 === 0
      ? w.slice(0, k) + w.slice(k + 1)
      : seed % 3 === 1
        ? w.slice(0, k) + w[k + 1] + w[k] + w.slice(k + 2)
        : w.slice(0, k) + w[k] + w.slice(k);
  return words.join(' ');
};
const unaccent = (s: string) => s.normalize('NFKD').replace(/\p{M}/gu, '');

export const CASES: { kind: string; query: string; expected: string }[] = [];
const showAt = (i: number) => SHOWS[(i * 37 + 13) % SHOWS.length]!;
for (let i = 0; i < 8; i++)
  CASES.push({ kind: 'typo', query: typo(showAt(i).title, i), expected: showAt(i).id });
for (let i = 8; i < 16; i++) {
  const extra = [
    'podcast',
    'latest episodes',
    'full show',
    'listen online',
    'interview series',
    'episodes 2026',
    'on spotify',
    'season 3',
  ][i - 8];
  CASES.push({
    kind: 'extra words',
    query: i % 2 ? `${showAt(i).title} ${extra}` : `${extra} ${showAt(i).title}`,
    expected: showAt(i).id,
  });
}
const longShows = SHOWS.filter((s) => s.title.split(' ').length >= 4);
for (let i = 0; i < 6; i++) {
  const show = longShows[(i * 17 + 5) % longShows.length]!;
  const words = show.title.split(' ');
  CASES.push({
    kind: 'missing words',
    query: words.filter((_, k) => k !== 1 + (i % (words.length - 2))).join(' '),
    expected: show.id,
  });
}
for (let i = 22; i < 28; i++)
  CASES.push({ kind: 'pasted episode title', query: showAt(i).episodes[i % 3]!, expected: showAt(i).id });
for (let i = 0; i < 8; i++)
  CASES.push({ kind: 'accents', query: unaccent(SHOWS[i]!.title).toLowerCase(), expected: SHOWS[i]!.id });
CASES.push({ kind: 'accents', query: 'Cafe Creme podcast', expected: 'show-0' });
CASES.push({ kind: 'typo', query: 'les echos du matn', expected: 'show-1' });
for (let i = 28; i < 32; i++)
  CASES.push({
    kind: 'typo and extra words',
    query: `${typo(showAt(i).title, i).toLowerCase()} podcast episodes`,
    expected: showAt(i).id,
  });
for (let i = 32; i < 36; i++) {
  const show = showAt(i);
  CASES.push({
    kind: 'name plus qualifiers',
    query: `${show.title} episode about ${show.episodes[0]!.split(' with ')[0]!.toLowerCase()}`,
    expected: show.id,
  });
}
