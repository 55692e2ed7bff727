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

  it('folds every ASCII string on its fast path as the code-point path does', () => {
    // A no-break space (a separator, not ASCII) sends the same text through the code-point path.
    const slow = (text: string) => foldWords(`${text}\u00a0`);
    const chars = Array.from({ length: 128 }, (_, c) => String.fromCharCode(c));
    const texts = ['', "O'Brien", 'tab\there\nnew\r\nline', 'x\u0000y\u007fz', 'AB12cd', '9-5', '__a__'];
    for (const a of chars) for (const b of chars) texts.push(`${a}${b}`, `a${a}B${b}9`);
    let seed = 1;
    for (let n = 0; n < 2000; n++) {
      let text = '';
      for (let k = n % 24; k > 0; k--) {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        text += chars[seed % 128];
      }
      texts.push(text);
    }
    for (const text of texts) expect(foldWords(text), JSON.stringify(text)).toEqual(slow(text));
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
