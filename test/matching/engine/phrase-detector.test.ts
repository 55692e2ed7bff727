import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PhraseDetector } from '../../../src/matching/engine/phrase-detector.ts';
import { foldWords, normaliseText } from '../../../src/matching/engine/text-folding.ts';

const NON_WORD = /[^\p{L}\p{N}]/gu;

function surfaces(detector: PhraseDetector, text: string): [string, string][] {
  return detector.findAll(text).map((hit) => [hit.phrase.key, text.slice(hit.start, hit.end)]);
}

describe('PhraseDetector', () => {
  it('finds names whole-word only: Apple is not in Pineapple', () => {
    const detector = new PhraseDetector();
    detector.setNames('apple', ['Apple']);
    expect(surfaces(detector, 'Pineapple, Apples and APPLE.')).toEqual([['apple', 'APPLE']]);
    expect(surfaces(detector, 'apple-pie')).toEqual([['apple', 'apple']]);
  });

  it('matches accents and case either way round', () => {
    const detector = new PhraseDetector();
    detector.setNames('zoe', ['Zoë']);
    detector.setNames('socgen', ['Societe Generale']);
    expect(surfaces(detector, 'zoe met ZOË and Zoe\u0308 at Société Générale')).toEqual([
      ['zoe', 'zoe'],
      ['zoe', 'ZOË'],
      ['zoe', 'Zoe\u0308'],
      ['societe generale', 'Société Générale'],
    ]);
  });

  it('finds multi-word names and their single-word aliases, overlapping hits included', () => {
    const detector = new PhraseDetector();
    detector.setNames('jensen', ['Jensen Huang', 'Jensen']);
    expect(surfaces(detector, 'Jensen  Huang said; later Jensen left. Jensen, Huang.')).toEqual([
      ['jensen', 'Jensen'],
      ['jensen huang', 'Jensen  Huang'],
      ['jensen', 'Jensen'],
      ['jensen', 'Jensen'],
      ['jensen huang', 'Jensen, Huang'],
    ]);
  });

  it('does not find a multi-word name when only its first words occur', () => {
    const detector = new PhraseDetector();
    detector.setNames('bank', ['Bank of America']);
    expect(detector.findAll('the bank of england and the bank of')).toEqual([]);
    expect(surfaces(detector, 'BANK OF AMERICA')).toEqual([['bank of america', 'BANK OF AMERICA']]);
  });

  it('treats punctuation inside names as a word break', () => {
    const detector = new PhraseDetector();
    detector.setNames('att', ['AT&T']);
    detector.setNames('obrien', ["O'Brien"]);
    detector.setNames('yahoo', ['Yahoo!']);
    expect(surfaces(detector, 'AT&T, O’Brien and yahoo. Not OBrien.')).toEqual([
      ['at t', 'AT&T'],
      ['o brien', 'O’Brien'],
      ['yahoo', 'yahoo'],
    ]);
  });

  it('reports every entity that shares a name', () => {
    const detector = new PhraseDetector();
    detector.setNames('apple-inc', ['Apple', 'Apple Inc.']);
    detector.setNames('apple-records', ['Apple Records', 'apple']);
    const [hit] = detector.findAll('apple');
    expect(hit?.phrase.entityIds).toEqual(['apple-inc', 'apple-records']);
  });

  it('adds and removes names incrementally', () => {
    const detector = new PhraseDetector();
    detector.setNames('a', ['Alpha Beta', 'Alpha']);
    detector.setNames('b', ['Alpha Beta Gamma']);
    const text = 'alpha beta gamma';
    expect(detector.findAll(text).map((hit) => hit.phrase.key)).toEqual([
      'alpha',
      'alpha beta',
      'alpha beta gamma',
    ]);

    detector.setNames('a', ['Alpha']);
    expect(detector.findAll(text).map((hit) => hit.phrase.key)).toEqual(['alpha', 'alpha beta gamma']);

    detector.removeEntity('b');
    expect(detector.findAll(text).map((hit) => hit.phrase.key)).toEqual(['alpha']);
    expect(detector.phraseCount).toBe(1);
    expect(detector.wordCount).toBe(1);

    detector.removeEntity('a');
    expect(detector.findAll(text)).toEqual([]);
    expect([detector.phraseCount, detector.wordCount, detector.entityCount]).toEqual([0, 0, 0]);

    detector.setNames('c', ['Beta Gamma']);
    expect(detector.findAll(text).map((hit) => hit.phrase.key)).toEqual(['beta gamma']);
  });

  it('keeps finding the remaining names after many additions and removals', () => {
    const detector = new PhraseDetector();
    for (let i = 0; i < 5000; i++) detector.setNames(`e${i}`, [`Name${i} Family${i % 97}`, `Alias${i}`]);
    for (let i = 0; i < 5000; i += 2) detector.removeEntity(`e${i}`);
    const text = Array.from({ length: 5000 }, (_, i) => `name${i} family${i % 97} and alias${i}`).join(' ');
    const found = new Set(detector.findAll(text).flatMap((hit) => hit.phrase.entityIds));
    expect(found.size).toBe(2500);
    expect([...found].every((id) => Number(id.slice(1)) % 2 === 1)).toBe(true);
    expect(detector.phraseCount).toBe(5000);
  });

  it('finds exactly what a whole-word regular expression finds in the folded text', () => {
    const letters = ['a', 'b', 'é', 'E', 'e\u0301', 'ß', 'Σ', 'ς', 'ﬁ', 'İ', '1', '𝐀', 'ø'];
    const separators = [' ', '  ', '-', "'", '&', '.', '\u00a0', '\n', '!', '\u0301'];
    const word = fc
      .array(fc.constantFrom(...letters), { minLength: 1, maxLength: 3 })
      .map((chars) => chars.join(''));
    const name = fc
      .tuple(fc.array(word, { minLength: 1, maxLength: 3 }), fc.constantFrom(' ', '-', '&', "'"))
      .map(([words, separator]) => words.join(separator));
    const text = fc
      .array(fc.oneof(word, fc.constantFrom(...separators)), { maxLength: 40 })
      .map((pieces) => pieces.join(''));

    fc.assert(
      fc.property(fc.uniqueArray(name, { minLength: 1, maxLength: 8 }), text, (names, sample) => {
        const detector = new PhraseDetector();
        for (const [i, n] of names.entries()) detector.setNames(`p${i}`, [n]);
        const found = new Map<string, number>();
        for (const hit of detector.findAll(sample)) {
          found.set(hit.phrase.key, (found.get(hit.phrase.key) ?? 0) + 1);
          expect(foldWords(sample.slice(hit.start, hit.end)).join(' ')).toBe(hit.phrase.key);
        }
        // Reference: fold the whole text, turn every non-word character into a space, then count
        // every position where the name's words start, separated by spaces, on word boundaries.
        const folded = normaliseText(sample).replace(NON_WORD, ' ');
        const expected = new Map<string, number>();
        for (const n of names) {
          const words = foldWords(n);
          const key = words.join(' ');
          if (words.length === 0 || expected.has(key)) continue;
          const body = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join(' +');
          const pattern = new RegExp(`(?<![^ ])(?=${body}(?![^ ]))`, 'gu');
          const count = [...folded.matchAll(pattern)].length;
          if (count > 0) expected.set(key, count);
        }
        expect(found).toEqual(expected);
      }),
      { numRuns: 2000 },
    );
  });
});
