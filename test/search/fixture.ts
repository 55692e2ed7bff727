import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import { entityEvent, episodeEvent } from '../fixtures/events.ts';

const podA = { id: 'pod-a', title: 'Chip Talk', slug: 'chip-talk', language: 'en', popularity: 0.96 };
const podB = { id: 'pod-b', title: 'Marchés', slug: 'marches', language: 'fr' };

const FILLER = ['Filler one.', 'Filler two.', 'Filler three.', 'Filler four.'];

/** ep-fox: producer mention of Nvidia, Jensen as GUEST, a segment and a clip around the fox. */
export const epFox: EpisodeTranscribed = episodeEvent({
  id: 'ep-fox',
  publishedAt: '2026-10-05T08:00:00Z',
  podcast: podA,
  lines: [
    'Welcome to the show.',
    'Today we talk about chips.',
    'Our guest runs a company.',
    'It is called NVIDIA, really.',
    ...FILLER,
    'The quick brown fox.',
    'It jumps over the lazy dog.',
  ],
  speakers: [
    { id: 'spk-host', name: 'Hannah Host', role: 'HOST' },
    { id: 'g', name: 'Jensen Huang', role: 'guest', entity_id: 'ent-jensen' },
  ],
  mentions: [{ entity_id: 'ent-nvidia', lines: [4], variants: ['NVIDIA'], relevance: 'on_target' }],
  segments: [
    { id: 'seg-intro', title: 'Intro', type: 'INTRO', number: 1, start_line: 1, end_line: 4 },
    { id: 'seg-fox', title: 'Animals', type: 'TOPIC_DISCUSSION', number: 2, start_line: 5, end_line: 10 },
  ],
  clips: [
    { id: 'clip-fox', title: 'The fox', start_seconds: 80, end_seconds: 95, engagement_score: 80 },
    { id: 'clip-intro', title: 'Hello', start_seconds: 0, end_seconds: 9, engagement_score: 50 },
  ],
});

/** ep-sg: French, accents; chips on line 1 and market on line 6 (six lines apart). */
export const epSg: EpisodeTranscribed = episodeEvent({
  id: 'ep-sg',
  publishedAt: '2026-11-02T23:30:00Z',
  language: 'fr-FR',
  podcast: podB,
  lines: [
    'Les chips sont chères.',
    'Société Générale annonce des résultats.',
    'Filler two.',
    'Filler three.',
    'Filler four.',
    'Le market est calme.',
    'Encore la SOCIETE GENERALE, disait Ada Lovelace.',
  ],
});

/** ep-near: chips on line 1 and market on line 5 (one passage); Ada Lovelace on line 3. */
export const epNear: EpisodeTranscribed = episodeEvent({
  id: 'ep-near',
  publishedAt: '2026-09-28T00:30:00Z',
  podcast: podA,
  lines: [
    'Chips everywhere.',
    'Filler two.',
    'As Ada Lovelace said.',
    'Filler four.',
    'The chip market grows.',
  ],
});

export const entities = [
  entityEvent({ id: 'ent-jensen', name: 'Jensen Huang', slug: 'jensen-huang', entity_type: 'PERSON' }),
  entityEvent({
    id: 'ent-nvidia',
    name: 'Nvidia',
    slug: 'nvidia',
    entity_type: 'COMPANY',
    company: { id: 'c-nvidia', domain: 'nvidia.com' },
  }),
  entityEvent({
    id: 'ent-sg',
    name: 'Société Générale',
    slug: 'societe-generale',
    entity_type: 'COMPANY',
    aliases: ['SocGen'],
  }),
];

/** Added after every episode was indexed. */
export const ada = entityEvent({
  id: 'ent-ada',
  name: 'Ada Lovelace',
  slug: 'ada-lovelace',
  entity_type: 'PERSON',
});

/** Quokka Labs: an entity only the tests that build their own corpus mention. */
export const quokka = entityEvent({ id: 'ent-quokka', name: 'Quokka Labs', entity_type: 'COMPANY' });
