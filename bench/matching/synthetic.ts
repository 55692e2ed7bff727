import type { AlertFilters } from '../../src/alerts/alert.ts';
import type { EntityType, EpisodeTranscribed, TranscriptLine } from '../../src/ingestion/events.ts';
import type { WatchedAlert } from '../../src/matching/types.ts';

import { prng as random } from '../../test/support/synthetic.ts';

/** Deterministic synthetic catalogue and episodes for the matching benchmark. */

function pick<T>(rnd: () => number, items: readonly T[]): T {
  return items[Math.floor(rnd() * items.length)]!;
}

const GIVEN = (
  'James Mary John Patricia Robert Jennifer Michael Linda William Elizabeth David Barbara Richard Susan ' +
  'Joseph Jessica Thomas Sarah Charles Karen Christopher Nancy Daniel Lisa Matthew Betty Anthony Margaret ' +
  'Mark Sandra Donald Ashley Steven Kimberly Paul Emily Andrew Donna Joshua Michelle Kenneth Carol Kevin ' +
  'Amanda Brian Dorothy George Melissa Timothy Deborah Ronald Stephanie Edward Rebecca Jason Sharon Jeffrey ' +
  'Laura Ryan Cynthia Jacob Kathleen Gary Amy Nicholas Angela Eric Shirley Jonathan Anna Stephen Brenda ' +
  'Larry Pamela Justin Emma Scott Nicole Brandon Helen Benjamin Samantha Samuel Katherine Gregory Christine ' +
  'Zoë José François Søren Łukasz Björn Renée Agnès Jürgen Zoltán Chloé Inés Mía Raúl Noémie Åsa Dagný ' +
  'Priya Arjun Wei Mei Hiroshi Yuki Olumide Chiamaka Mateo Valentina Dmitri Anastasia Kwame Amara Ingrid'
).split(' ');

const FAMILY = (
  'Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez ' +
  'Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark ' +
  'Ramirez Lewis Robinson Walker Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams ' +
  'Nelson Baker Hall Rivera Campbell Mitchell Carter Roberts Gomez Phillips Evans Turner Diaz Parker ' +
  'Cruz Edwards Collins Reyes Stewart Morris Morales Murphy Cook Rogers Gutierrez Ortiz Morgan Cooper ' +
  "Peterson Bailey Reed Kelly Howard Ramos Kim Cox Ward Richardson Watson Brooks Chavez Wood O'Brien " +
  "O'Connor McAllister Müller Schröder Lefèvre Dubois Núñez Peña Kowalczyk Søgaard Ångström Huang " +
  'Nakamura Takahashi Okafor Adeyemi Castellanos Villanueva Fitzgerald Abernathy Delacroix Vasquez ' +
  'Kapoor Chatterjee Lindqvist Haugen Novak Horvat Popescu Ivanova Petrov Rossi Bianchi Ferrari Esposito'
).split(' ');

const SYLLABLES = (
  'ka ve lo tra quo rix zen mar tel nov ar is on el ux pra dyn sol vex lum cor tan bri fi go bel cas dor ' +
  'fen gal hul jor kel lys mon nar ost pel quin rov sta tor ul vor wen xan yel zor ab ce di fo gu hy ik ' +
  'jul kri lom mu nex ob pix qua ren sy tu vi wy ze'
).split(' ');
const INDUSTRY = (
  'Systems Labs Capital Energy Robotics Health Foods Motors Networks Bank Insurance Media Pharmaceuticals ' +
  'Logistics Semiconductor Software Airlines Holdings Partners Analytics Biotech Group Ventures Studios'
).split(' ');
const SUFFIX = ['Inc.', 'Corp', 'AG', 'S.A.', '& Co.', 'Ltd', ''];
const TOPIC_ADJ = (
  'Quantum Renewable Artificial Global Digital Urban Genetic Monetary Nuclear Coastal Autonomous Cognitive ' +
  'Financial Political Medieval Orbital Synthetic Tropical Mobile Cellular Neural Arctic Solar Civil'
).split(' ');
const TOPIC_NOUN = (
  'Computing Energy Intelligence Trade Planning Engineering Policy Fusion Erosion Vehicles Science ' +
  'Regulation Reform History Mechanics Biology Storms Payments Networks Rights Warming Markets Ethics'
).split(' ');

const COMMON =
  'the of and to a in that it is was for on are as with his they at be this have from or one had by word but not what all were we when your can said there use an each which she do how their if will up other about out many then them these so some her would make like him into time has look two more write go see number no way could people my than first water been call who oil its now find long down day did get come made may part yeah so really think know actually right interesting market company today about going people thing mean kind lot pretty just year new big work podcast show question point money world'.split(
    ' ',
  );

export interface SyntheticEntity {
  id: string;
  type: EntityType;
  name: string;
  aliases: string[];
}

function brand(rnd: () => number): string {
  const n = 2 + Math.floor(rnd() * 2);
  let word = '';
  for (let i = 0; i < n; i++) word += pick(rnd, SYLLABLES);
  return word[0]!.toUpperCase() + word.slice(1);
}

/** `count` distinct entities: 40% people, 40% companies (some with ticker-like aliases), 20% topics. */
export function syntheticEntities(count: number, seed = 1): SyntheticEntity[] {
  const rnd = random(seed);
  const seen = new Set<string>();
  const entities: SyntheticEntity[] = [];
  while (entities.length < count) {
    const kind = rnd();
    let entity: SyntheticEntity;
    const id = `ent_${entities.length}`;
    if (kind < 0.4) {
      const given = pick(rnd, GIVEN);
      const family =
        rnd() < 0.5 ? pick(rnd, FAMILY) : `${brand(rnd)}${pick(rnd, ['son', 'er', 'ova', 'ez', 'i', ''])}`;
      const middle = rnd() < 0.3 ? ` ${pick(rnd, GIVEN)}` : '';
      const name = `${given}${middle} ${family}`;
      const aliases = middle ? [`${given} ${family}`, `${given[0]}.${middle[1]}. ${family}`] : [];
      if (rnd() < 0.5) aliases.push(`${family}, ${given}`);
      entity = { id, type: 'PERSON', name, aliases: aliases.filter((alias) => alias !== name) };
    } else if (kind < 0.8) {
      const core = rnd() < 0.3 ? `${brand(rnd)} ${brand(rnd)}` : brand(rnd);
      const suffix = pick(rnd, SUFFIX);
      const name = `${core} ${pick(rnd, INDUSTRY)}${suffix ? ` ${suffix}` : ''}`;
      const aliases = [core];
      if (rnd() < 0.6)
        aliases.push(
          core
            .replace(/[aeiou ]/g, '')
            .slice(0, 5)
            .toUpperCase(),
        );
      entity = { id, type: 'COMPANY', name, aliases };
    } else {
      const name = `${pick(rnd, TOPIC_ADJ)} ${pick(rnd, TOPIC_NOUN)} ${rnd() < 0.9 ? brand(rnd) : ''}`.trim();
      entity = { id, type: 'KNOWLEDGE_GRAPH_ENTITY', name, aliases: [] };
    }
    if (seen.has(entity.name)) continue;
    seen.add(entity.name);
    entities.push(entity);
  }
  return entities;
}

/** `count` active alerts spread over the entities (every entity watched at least once when count ≥ entities). */
export function syntheticAlerts(
  entities: readonly SyntheticEntity[],
  count: number,
  seed = 2,
): WatchedAlert[] {
  const rnd = random(seed);
  const alerts: WatchedAlert[] = [];
  for (let i = 0; i < count; i++) {
    const entity = i < entities.length ? entities[i]! : pick(rnd, entities);
    const speaker = entity.type === 'PERSON' && rnd() < 0.3;
    const filters: AlertFilters = {};
    if (rnd() < 0.3) filters.languages = rnd() < 0.8 ? ['en'] : ['fr', 'de'];
    if (rnd() < 0.2) filters.relevance = 'RELEVANT';
    if (rnd() < 0.1) filters.sourcePopularity = ['POPULAR'];
    if (speaker && rnd() < 0.3) filters.speakerRoles = ['GUEST', 'PANELIST'];
    alerts.push({
      alertId: `alert_${i}`,
      projectId: `proj_${i % 500}`,
      organizationId: `org_${i % 200}`,
      kind: speaker ? 'PODCAST_SPEAKER' : 'ENTITY_MENTION',
      entityId: entity.id,
      entityType: entity.type,
      filters,
    });
  }
  return alerts;
}

function sentence(rnd: () => number): string {
  const n = 8 + Math.floor(rnd() * 18);
  const words: string[] = [];
  for (let i = 0; i < n; i++) words.push(pick(rnd, COMMON));
  words[0] = words[0]![0]!.toUpperCase() + words[0]!.slice(1);
  return `${words.join(' ')}${pick(rnd, ['.', '.', '?', '!', ','])}`;
}

/** An episode with a `lineCount`-line transcript and about `mentionCount` entity mentions. */
export function syntheticEpisode(
  entities: readonly SyntheticEntity[],
  index: number,
  options: { lineCount?: number; mentionCount?: number; seed?: number } = {},
): EpisodeTranscribed {
  const rnd = random((options.seed ?? 3) * 1_000_003 + index);
  const lineCount = options.lineCount ?? 2000;
  const mentionCount = options.mentionCount ?? 30;
  const guest = pick(rnd, entities);
  const speakers = [
    { id: 'spk_host', name: 'Alex Host', role: 'HOST' },
    { id: 'spk_guest', name: guest.name, role: 'GUEST', entity_id: guest.id },
  ];
  const lines: TranscriptLine[] = [];
  let clock = 0;
  for (let number = 1; number <= lineCount; number++) {
    const speaker = speakers[number % 3 === 0 ? 1 : 0]!;
    let text = sentence(rnd);
    if (rnd() < mentionCount / lineCount) {
      const entity = pick(rnd, entities);
      const surface = rnd() < 0.5 || entity.aliases.length === 0 ? entity.name : pick(rnd, entity.aliases);
      const shaped = rnd() < 0.2 ? surface.toUpperCase() : surface;
      text = `${text} I was talking with ${shaped} about that ${sentence(rnd)}`;
    }
    const duration = 2 + rnd() * 6;
    lines.push({
      number,
      speaker_id: speaker.id,
      speaker: speaker.name,
      role: speaker.role,
      start_seconds: Math.round(clock * 10) / 10,
      end_seconds: Math.round((clock + duration) * 10) / 10,
      text,
    });
    clock += duration + 0.3;
  }
  const segmentSize = Math.ceil(lineCount / 10);
  const segments = Array.from({ length: 10 }, (_, s) => {
    const first = lines[s * segmentSize];
    const last = lines[Math.min(lineCount, (s + 1) * segmentSize) - 1];
    return {
      id: `seg_${index}_${s}`,
      title: `Segment ${s + 1}`,
      type: 'TOPIC_DISCUSSION',
      number: s + 1,
      start_line: s * segmentSize + 1,
      end_line: Math.min(lineCount, (s + 1) * segmentSize),
      start_seconds: first?.start_seconds ?? 0,
      end_seconds: last?.end_seconds ?? 0,
    };
  });
  return {
    type: 'episode.transcribed',
    event_id: `evt_${index}`,
    occurred_at: '2026-11-20T10:00:00Z',
    podcast: { id: `pod_${index % 300}`, title: 'Synthetic Show', language: 'en', popularity: rnd() },
    episode: {
      id: `ep_${index}`,
      title: `Episode ${index}: a conversation with ${guest.name}`,
      published_at: '2026-11-20T09:00:00Z',
      duration_seconds: Math.round(clock),
      language: rnd() < 0.9 ? 'en-US' : 'fr-FR',
      description: 'A long conversation about markets, technology and the people who build them.',
    },
    speakers,
    transcript: { language: 'en', lines },
    segments,
    clips: [
      { id: `clip_${index}_1`, title: 'Best bit', type: 'INSIGHTFUL', start_seconds: 300, end_seconds: 360 },
      { id: `clip_${index}_2`, title: 'Hot take', type: 'SPICY', start_seconds: 2400, end_seconds: 2460 },
    ],
  };
}
