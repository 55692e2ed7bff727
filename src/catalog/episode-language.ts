import type { EpisodeTranscribed } from '../ingestion/events.ts';

/**
 * An episode's language (docs/catalog.md, "An episode's language"): what its event says (the
 * episode's, else the transcript's, else the event's podcast block's), else its show's. The one
 * rule for the catalog's read models and for alert matching; `episodeLanguage` in
 * projections/catalog-episodes/queries.ts is its SQL form over the stored event language.
 */
export const eventLanguage = (e: Pick<EpisodeTranscribed, 'episode' | 'transcript' | 'podcast'>) =>
  e.episode.language ?? e.transcript?.language ?? e.podcast.language;

export const episodeLanguage = (
  e: Pick<EpisodeTranscribed, 'episode' | 'transcript' | 'podcast'>,
  showLanguage: string | null | undefined,
): string | undefined => eventLanguage(e) ?? showLanguage ?? undefined;
