import type { Alert } from '../alerts/alert.ts';
import { matchesLanguages } from '../matching/language.ts';
import { meetsAnySourcePopularity } from '../matching/popularity.ts';
import type { MatchedData } from './matched.ts';

/**
 * The alert's current filters, applied again when a delivery is sent or a digest selected (the
 * interface spec: filters apply to the realtime message and the digests), so a filter tightened
 * after a match was found stops its notification. Absent or empty axes pass everything.
 */
export function passesFilters(match: MatchedData, alert: Pick<Alert, 'kind' | 'filters'>): boolean {
  const { languages, relevance, sourcePopularity, speakerRoles } = alert.filters;
  if (languages?.length && !matchesLanguages(match.language, languages)) return false;
  if (
    sourcePopularity?.length &&
    !meetsAnySourcePopularity(match.episode?.podcast_popularity, sourcePopularity)
  )
    return false;
  if (relevance === 'RELEVANT' && match.relevance !== 'on_target') return false;
  if (alert.kind === 'PODCAST_SPEAKER' && speakerRoles?.length) {
    const wanted = new Set<string>(speakerRoles);
    if (!match.roles.some((role) => wanted.has(role))) return false;
  }
  return true;
}
