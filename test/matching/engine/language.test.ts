import { describe, expect, it } from 'vitest';
import { matchesLanguages, primaryLanguageSubtag } from '../../../src/matching/engine/language.ts';

describe('language filter', () => {
  it('reads the primary subtag of a language tag', () => {
    expect(primaryLanguageSubtag('en-US')).toBe('en');
    expect(primaryLanguageSubtag('PT_br')).toBe('pt');
    expect(primaryLanguageSubtag('fr')).toBe('fr');
    expect(primaryLanguageSubtag('')).toBeUndefined();
  });

  it('matches alert languages on the primary subtag', () => {
    expect(matchesLanguages('en-US', ['en'])).toBe(true);
    expect(matchesLanguages('en-GB', ['fr', 'EN'])).toBe(true);
    expect(matchesLanguages('fr-CA', ['en'])).toBe(false);
  });

  it('accepts any episode without a filter and no language-less episode with one', () => {
    expect(matchesLanguages(undefined, [])).toBe(true);
    expect(matchesLanguages(undefined, ['en'])).toBe(false);
  });
});
