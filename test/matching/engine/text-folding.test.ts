import { describe, expect, it } from 'vitest';
import { foldCodePoint, foldWords, normaliseText } from '../../../src/matching/engine/text-folding.ts';

describe('text folding', () => {
  it('drops accents and case, composed or decomposed', () => {
    expect(foldWords('Zoë')).toEqual(['zoe']);
    expect(foldWords('Zoe\u0308')).toEqual(['zoe']);
    expect(foldWords('SOCIÉTÉ Générale')).toEqual(['societe', 'generale']);
    expect(foldWords('Łukasz Søgaard')).toEqual(['łukasz', 'søgaard']);
  });

  it('splits words on every character that is not a letter or digit', () => {
    expect(foldWords("O'Brien")).toEqual(['o', 'brien']);
    expect(foldWords('AT&T')).toEqual(['at', 't']);
    expect(foldWords('Yahoo!')).toEqual(['yahoo']);
    expect(foldWords('  Jensen   Huang ')).toEqual(['jensen', 'huang']);
    expect(foldWords('3M')).toEqual(['3m']);
    expect(foldWords('!!!')).toEqual([]);
  });

  it('folds ASCII text (its fast path) as it folds the same characters among others', () => {
    const ascii = Array.from({ length: 128 }, (_, c) => `Ab${String.fromCharCode(c)}9Z`).join('');
    // The é keeps the text off the ASCII path; it folds to a word of its own.
    expect(foldWords(ascii)).toEqual(foldWords(`${ascii} é`).slice(0, -1));
    expect(foldWords(`${ascii} é`).at(-1)).toBe('e');
    expect(foldWords(ascii)).toEqual(
      ascii.split(/[^A-Za-z0-9]+/).flatMap((w) => (w ? [w.toLowerCase()] : [])),
    );
  });

  it('applies compatibility decomposition to ligatures, full-width letters and fractions', () => {
    expect(foldWords('ﬁnance')).toEqual(['finance']);
    expect(foldWords('ＮＶＩＤＩＡ')).toEqual(['nvidia']);
    expect(foldWords('½')).toEqual(['1', '2']);
    expect(foldWords('𝐀pple')).toEqual(['apple']);
  });

  it('folds the final sigma like any other sigma', () => {
    expect(foldWords('ΟΔΥΣΣΕΥΣ')).toEqual(foldWords('οδυσσευς'));
    expect(foldCodePoint('ς'.codePointAt(0)!)).toBe('σ');
  });

  it('folds a dotted capital I to a plain i', () => {
    expect(foldWords('İstanbul')).toEqual(['istanbul']);
    expect(normaliseText('İ')).toBe('i');
  });
});
