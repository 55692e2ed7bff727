/**
 * Language filter (docs/matching.md, Filters): alert languages are ISO 639-1 codes matched on the primary
 * subtag of the episode's language, so `en` matches `en-US` and `EN_gb`.
 */
export function primaryLanguageSubtag(tag: string | null | undefined): string | undefined {
  if (typeof tag !== 'string') return undefined;
  const primary = tag.trim().split(/[-_]/, 1)[0]?.toLowerCase();
  return primary ? primary : undefined;
}

/** An empty list accepts every episode; otherwise an episode without a language never matches. */
export function matchesLanguages(episodeLanguage: string | undefined, languages: readonly string[]): boolean {
  if (languages.length === 0) return true;
  const primary = primaryLanguageSubtag(episodeLanguage);
  if (primary === undefined) return false;
  return languages.some((language) => primaryLanguageSubtag(language) === primary);
}
