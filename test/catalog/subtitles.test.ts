import { describe, expect, it } from 'vitest';
import { parseSrt, parseVtt } from './subtitles.ts';

const SRT = '1\n00:00:01,000 --> 00:00:02,500\nAda: Hello\n\n2\n00:00:03,000 --> 00:00:04,000\nBye\n';

describe('the subtitle readers the catalog tests use', () => {
  it('read well-formed SubRip and WebVTT', () => {
    expect(parseSrt(SRT)).toEqual([
      { id: '1', start: 1, end: 2.5, text: 'Ada: Hello' },
      { id: '2', start: 3, end: 4, text: 'Bye' },
    ]);
    expect(parseVtt('WEBVTT\n\n1\n00:00:01.000 --> 00:00:02.500\n<v Ada>Hello\n')).toEqual([
      { id: '1', start: 1, end: 2.5, text: '<v Ada>Hello' },
    ]);
  });

  it('reject SubRip that the format does not allow', () => {
    for (const bad of [
      SRT.replaceAll(',', '.'),
      SRT.replace('00:00:01,000', '0:0:1,0'),
      SRT.replace('Ada: Hello\n', ''),
      SRT.replace('2\n', '3\n'),
      SRT.replace('00:00:04,000', '00:00:02,000'),
      SRT.trimEnd(),
      `WEBVTT\n\n${SRT}`,
    ])
      expect(() => parseSrt(bad), JSON.stringify(bad)).toThrow();
  });

  it('reject WebVTT that the format does not allow', () => {
    for (const bad of [
      '1\n00:00:01.000 --> 00:00:02.500\nHello\n',
      'WEBVTT\n\n1\n00:00:01,000 --> 00:00:02,500\nHello\n',
      'WEBVTT\n\n1\n00:00:03.000 --> 00:00:02.500\nHello\n',
    ])
      expect(() => parseVtt(bad), JSON.stringify(bad)).toThrow();
  });
});
