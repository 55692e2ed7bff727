import type { MentionRelevance } from '../ingestion/events.ts';
import { matchesLanguages } from '../matching/engine/language.ts';
import { meetsAnySourcePopularity } from '../matching/engine/popularity.ts';
import type { SpeakerRole } from '../matching/engine/roles.ts';
import type { Alert, AlertFilters } from './alert.ts';

/**
 * An alert's filters (docs/matching.md, "Filters"), the one rule the matcher applies when it finds
 * a match and the deliverer applies again when it sends or selects a digest, so a filter tightened
 * after a match was found stops its notification. Absent or empty axes pass everything.
 */

/** The episode's own facts: checked by the matcher before it looks for evidence. */
export function passesSourceFilters(
  source: { language?: string | undefined; popularity?: number | undefined },
  filters: AlertFilters,
): boolean {
  const { languages, sourcePopularity } = filters;
  if (languages?.length && !matchesLanguages(source.language, languages)) return false;
  if (sourcePopularity?.length && !meetsAnySourcePopularity(source.popularity, sourcePopularity))
    return false;
  return true;
}

/** RELEVANT: only on_target mentions count. */
export const onlyRelevant = (filters: AlertFilters) => filters.relevance === 'RELEVANT';

/** PODCAST_SPEAKER: whether a speaker of this role is wanted (never a host). */
export function wantsSpeakerRole(filters: AlertFilters, role: SpeakerRole): boolean {
  const wanted: readonly SpeakerRole[] | undefined = filters.speakerRoles;
  return role !== 'HOST' && (!wanted?.length || wanted.includes(role));
}

/** What a found match says about itself, as the filters read it. */
export interface MatchFacts {
  language?: string | undefined;
  episode?: { podcast_popularity?: number | undefined } | undefined;
  relevance: MentionRelevance;
  roles: readonly SpeakerRole[];
}

/** Whether a match found earlier still passes the alert's filters as they are now. */
export function passesFilters(match: MatchFacts, alert: Pick<Alert, 'kind' | 'filters'>): boolean {
  const { filters } = alert;
  if (
    !passesSourceFilters({ language: match.language, popularity: match.episode?.podcast_popularity }, filters)
  )
    return false;
  if (onlyRelevant(filters) && match.relevance !== 'on_target') return false;
  if (alert.kind === 'PODCAST_SPEAKER' && filters.speakerRoles?.length)
    return match.roles.some((role) => wantsSpeakerRole(filters, role));
  return true;
}
