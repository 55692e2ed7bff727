import { onlyRelevant, passesSourceFilters, wantsSpeakerRole } from '../../alerts/filters.ts';
import { episodeLanguage } from '../../catalog/episode-language.ts';
import type {
  EpisodeSpeaker,
  EpisodeTranscribed,
  MentionRelevance,
  ProducerMention,
  TranscriptLine,
} from '../../ingestion/events.ts';
import type { AlertMatchedData, MatchWindow, WatchedAlert } from '../types.ts';
import type { AlertIndex } from './alert-index.ts';
import { matchId } from './match-id.ts';
import type { PhraseDetector, PhraseHitHandler } from './phrase-detector.ts';
import { SPEAKER_ROLES, type SpeakerRole, speakerRoleOrUnknown } from './roles.ts';
import { buildWindows, lineRole, type WindowSources } from './windows.ts';

/** Detected mentions are on_target from this many distinct mention lines on (or when named in the title/description). */
export const ON_TARGET_MIN_LINES = 3;

export interface MatchContext {
  /** Active alerts by entity. */
  index: AlertIndex;
  /** Names and aliases of the watched entities. */
  detector: PhraseDetector;
  now: Date;
  /** True when matching for an alert's creation-time backfill (never notified). */
  isBackfilled?: boolean;
  /** The show's language, for an episode whose event names none (docs/matching.md, Filters). */
  showLanguage?: string | null | undefined;
}

/** What an entity's mentions amount to for one relevance setting. */
interface MentionEvidence {
  mentionCount: number;
  variants: string[];
  relevance: MentionRelevance;
  roles: SpeakerRole[];
  windows: MatchWindow[];
  truncated: boolean;
}

interface Detected {
  lineIndexes: number[];
  variants: Set<string>;
}

/**
 * Matches one transcribed episode against the active alerts: one AlertMatchedData per matching
 * alert. Pure: the same episode, alerts, names, show language and `now` give the same result, ids
 * included.
 *
 * ENTITY_MENTION uses the producer's mentions[] for an entity when it sent any for that entity,
 * otherwise the detector's whole-word matches of the entity's name and aliases in the transcript
 * lines. PODCAST_SPEAKER matches a speaker linked to the entity whose role is not HOST (CO_HOST is
 * HOST). Filters: see docs/matching.md. Matches of alerts on the same entity share their windows
 * arrays: treat the result as immutable.
 */
export function matchEpisode(episode: EpisodeTranscribed, context: MatchContext): AlertMatchedData[] {
  const { index, detector } = context;
  const lines = episode.transcript?.lines ?? [];
  const speakers = episode.speakers ?? [];
  const speakersById = new Map<string, EpisodeSpeaker>();
  for (const speaker of speakers) if (speaker.id !== undefined) speakersById.set(speaker.id, speaker);
  const sources: WindowSources = {
    lines,
    segments: episode.segments ?? [],
    clips: episode.clips ?? [],
    speakersById,
  };

  const produced = new Map<string, ProducerMention[]>();
  for (const mention of episode.mentions ?? []) {
    if (!index.isWatched(mention.entity_id)) continue;
    const list = produced.get(mention.entity_id);
    if (list === undefined) produced.set(mention.entity_id, [mention]);
    else list.push(mention);
  }

  const detected = new Map<string, Detected>();
  let lineIndex = 0;
  let lineText = '';
  const onHit: PhraseHitHandler = (phrase, start, end) => {
    for (const entityId of phrase.entityIds) {
      if (produced.has(entityId) || !index.isWatched(entityId)) continue;
      let found = detected.get(entityId);
      if (found === undefined) {
        found = { lineIndexes: [], variants: new Set() };
        detected.set(entityId, found);
      }
      if (found.lineIndexes[found.lineIndexes.length - 1] !== lineIndex) found.lineIndexes.push(lineIndex);
      found.variants.add(lineText.slice(start, end));
    }
  };
  for (lineIndex = 0; lineIndex < lines.length; lineIndex++) {
    lineText = lines[lineIndex]!.text;
    detector.scan(lineText, onHit);
  }

  const linked = new Map<string, EpisodeSpeaker[]>();
  for (const speaker of speakers) {
    if (speaker.entity_id === undefined || !index.isWatched(speaker.entity_id)) continue;
    const list = linked.get(speaker.entity_id);
    if (list === undefined) linked.set(speaker.entity_id, [speaker]);
    else list.push(speaker);
  }

  let namedInHeader: Set<string> | undefined;
  const isNamedInHeader = (entityId: string): boolean => {
    if (namedInHeader === undefined) {
      const named = new Set<string>();
      const collect: PhraseHitHandler = (phrase) => {
        for (const id of phrase.entityIds) named.add(id);
      };
      detector.scan(episode.episode.title, collect);
      if (episode.episode.description !== undefined) detector.scan(episode.episode.description, collect);
      namedInHeader = named;
    }
    return namedInHeader.has(entityId);
  };

  const lineIndexByNumber = new Map<number, number>();
  if (produced.size > 0) for (let i = 0; i < lines.length; i++) lineIndexByNumber.set(lines[i]!.number, i);

  const evidenceCache = new Map<string, MentionEvidence | null>();
  const mentionEvidence = (entityId: string, relevantOnly: boolean): MentionEvidence | null => {
    const key = `${relevantOnly ? 'R' : 'A'}${entityId}`;
    let evidence = evidenceCache.get(key);
    if (evidence === undefined) {
      const fromProducer = produced.get(entityId);
      if (fromProducer !== undefined) {
        evidence = producedEvidence(fromProducer, relevantOnly, lineIndexByNumber, sources, () =>
          isNamedInHeader(entityId),
        );
      } else {
        const found = detected.get(entityId);
        evidence =
          found === undefined
            ? null
            : detectedEvidence(found, relevantOnly, sources, () => isNamedInHeader(entityId));
      }
      evidenceCache.set(key, evidence);
    }
    return evidence;
  };

  // Alerts on one speaker with the same roles filter share their evidence: computed per alert,
  // 20 alerts on the speaker of a 100,000-line episode took 6 s where one took 0.2 s.
  const speakerCache = new Map<string, MentionEvidence | null>();
  const speakerEvidenceOf = (entityId: string, alert: WatchedAlert): MentionEvidence | null => {
    const key = `${entityId}\u0000${[...new Set(alert.filters.speakerRoles ?? [])].sort().join(',')}`;
    let evidence = speakerCache.get(key);
    if (evidence === undefined) {
      evidence = speakerEvidence(linked.get(entityId) ?? [], alert, sources);
      speakerCache.set(key, evidence);
    }
    return evidence;
  };

  const language = episodeLanguage(episode, context.showLanguage);
  const popularity = episode.podcast.popularity;
  const detectedAt = context.now.toISOString();
  const isBackfilled = context.isBackfilled ?? false;
  const results: AlertMatchedData[] = [];
  const candidates = new Set<string>([...produced.keys(), ...detected.keys(), ...linked.keys()]);
  for (const entityId of candidates) {
    for (const alert of index.alertsFor(entityId)) {
      const { filters } = alert;
      if (!passesSourceFilters({ language, popularity }, filters)) continue;
      const evidence =
        alert.kind === 'ENTITY_MENTION'
          ? mentionEvidence(entityId, onlyRelevant(filters))
          : speakerEvidenceOf(entityId, alert);
      if (evidence === null) continue;
      results.push({
        matchId: matchId(alert.alertId, episode.episode.id),
        alertId: alert.alertId,
        projectId: alert.projectId,
        kind: alert.kind,
        entityId: alert.entityId,
        entityType: alert.entityType,
        sourceId: episode.episode.id,
        sourceType: 'EPISODE',
        detectedAt,
        mentionCount: evidence.mentionCount,
        mentionVariants: evidence.variants,
        relevance: evidence.relevance,
        roles: evidence.roles,
        windows: evidence.windows,
        truncated: evidence.truncated,
        isBackfilled,
      });
    }
  }
  return results;
}

function detectedRelevance(distinctLines: number, namedInHeader: () => boolean): MentionRelevance {
  return distinctLines >= ON_TARGET_MIN_LINES || namedInHeader() ? 'on_target' : 'incidental';
}

function detectedEvidence(
  found: Detected,
  relevantOnly: boolean,
  sources: WindowSources,
  namedInHeader: () => boolean,
): MentionEvidence | null {
  const relevance = detectedRelevance(found.lineIndexes.length, namedInHeader);
  if (relevantOnly && relevance !== 'on_target') return null;
  return {
    mentionCount: found.lineIndexes.length,
    variants: [...found.variants],
    relevance,
    roles: rolesOfLines(found.lineIndexes, sources),
    ...buildWindows(sources, found.lineIndexes),
  };
}

function producedEvidence(
  mentions: readonly ProducerMention[],
  relevantOnly: boolean,
  lineIndexByNumber: ReadonlyMap<number, number>,
  sources: WindowSources,
  namedInHeader: () => boolean,
): MentionEvidence | null {
  // A mention the producer sent without relevance is judged by the same rule as a detected one.
  let fallback: MentionRelevance | undefined;
  const relevanceOf = (mention: ProducerMention): MentionRelevance => {
    if (mention.relevance !== undefined) return mention.relevance;
    if (fallback === undefined) {
      const all = new Set<number>();
      for (const m of mentions) for (const number of m.lines ?? []) all.add(number);
      fallback = detectedRelevance(all.size, namedInHeader);
    }
    return fallback;
  };
  const counted = relevantOnly ? mentions.filter((m) => relevanceOf(m) === 'on_target') : mentions;
  if (counted.length === 0) return null;
  const numbers = new Set<number>();
  let withoutLines = 0;
  const variants = new Set<string>();
  for (const mention of counted) {
    if (mention.lines === undefined || mention.lines.length === 0) withoutLines++;
    for (const number of mention.lines ?? []) numbers.add(number);
    for (const variant of mention.variants ?? []) variants.add(variant);
  }
  const lineIndexes: number[] = [];
  for (const number of numbers) {
    const at = lineIndexByNumber.get(number);
    if (at !== undefined) lineIndexes.push(at);
  }
  lineIndexes.sort((a, b) => a - b);
  return {
    mentionCount: numbers.size + withoutLines,
    variants: [...variants],
    relevance: counted.some((m) => relevanceOf(m) === 'on_target') ? 'on_target' : 'incidental',
    roles: rolesOfLines(lineIndexes, sources),
    ...buildWindows(sources, lineIndexes),
  };
}

function speakerEvidence(
  speakers: readonly EpisodeSpeaker[],
  alert: WatchedAlert,
  sources: WindowSources,
): MentionEvidence | null {
  const matched = speakers.filter((speaker) =>
    wantsSpeakerRole(alert.filters, speakerRoleOrUnknown(speaker.role)),
  );
  if (matched.length === 0) return null;
  const ids = new Set<string>();
  const names = new Set<string>();
  for (const speaker of matched) {
    if (speaker.id !== undefined) ids.add(speaker.id);
    if (speaker.name !== undefined) names.add(speaker.name);
  }
  // Lines name their speaker by id; a line without speaker_id is attributed by speaker name.
  const spoken = (line: TranscriptLine): boolean =>
    line.speaker_id !== undefined
      ? ids.has(line.speaker_id)
      : line.speaker !== undefined && names.has(line.speaker);
  const lineIndexes: number[] = [];
  for (let i = 0; i < sources.lines.length; i++) if (spoken(sources.lines[i]!)) lineIndexes.push(i);
  return {
    mentionCount: lineIndexes.length,
    variants: [...names],
    relevance: 'on_target',
    roles: sortRoles(new Set(matched.map((speaker) => speakerRoleOrUnknown(speaker.role)))),
    ...buildWindows(sources, lineIndexes),
  };
}

function rolesOfLines(lineIndexes: readonly number[], sources: WindowSources): SpeakerRole[] {
  const roles = new Set<SpeakerRole>();
  for (const i of lineIndexes) {
    const role = lineRole(sources.lines[i]!, sources.speakersById);
    if (role !== undefined) roles.add(role);
  }
  return sortRoles(roles);
}

function sortRoles(roles: ReadonlySet<SpeakerRole>): SpeakerRole[] {
  return SPEAKER_ROLES.filter((role) => roles.has(role));
}
