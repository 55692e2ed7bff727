import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EpisodeClip, EpisodeSpeaker, TranscriptLine } from '../../../src/ingestion/events.ts';
import {
  buildWindows,
  MAX_WINDOW_CHARACTERS,
  MAX_WINDOW_LINES,
  MAX_WINDOW_TEXT,
  MAX_WINDOWS,
} from '../../../src/matching/engine/windows.ts';
import { fillerLines, transcriptLines } from '../episode-fixture.ts';

const lines = transcriptLines(fillerLines(600));
const numbersOf = (windows: { lines: { number: number }[] }[]) =>
  windows.map((w) => w.lines.map((line) => line.number));

describe('buildWindows', () => {
  it('takes two lines of context either side of a mention line', () => {
    const { windows, truncated } = buildWindows({ lines }, [9]);
    expect(numbersOf(windows)).toEqual([[8, 9, 10, 11, 12]]);
    expect(windows[0]!.lines.map((line) => line.is_mention)).toEqual([false, false, true, false, false]);
    expect([windows[0]!.start_seconds, windows[0]!.end_seconds]).toEqual([70, 118]);
    expect(truncated).toBe(false);
  });

  it('clamps the context at the transcript edges', () => {
    const { windows } = buildWindows({ lines: lines.slice(0, 10) }, [0, 9]);
    expect(numbersOf(windows)).toEqual([
      [1, 2, 3],
      [8, 9, 10],
    ]);
  });

  it('merges overlapping windows', () => {
    const { windows } = buildWindows({ lines }, [4, 7]);
    expect(numbersOf(windows)).toEqual([[3, 4, 5, 6, 7, 8, 9, 10]]);
    expect(windows[0]!.lines.filter((line) => line.is_mention).map((line) => line.number)).toEqual([5, 8]);
  });

  it('merges adjacent windows and keeps windows with a gap apart', () => {
    expect(numbersOf(buildWindows({ lines }, [4, 9]).windows)).toEqual([[3, 4, 5, 6, 7, 8, 9, 10, 11, 12]]);
    expect(numbersOf(buildWindows({ lines }, [4, 10]).windows)).toEqual([
      [3, 4, 5, 6, 7],
      [9, 10, 11, 12, 13],
    ]);
  });

  it('keeps at most 50 windows and marks the rest as truncated', () => {
    const every10 = (count: number) => Array.from({ length: count }, (_, i) => i * 10 + 5);
    const exactly50 = buildWindows({ lines }, every10(50));
    expect([exactly50.windows.length, exactly50.truncated]).toEqual([50, false]);
    const sixty = buildWindows({ lines }, every10(60));
    expect([sixty.windows.length, sixty.truncated]).toEqual([50, true]);
    expect(sixty.windows[49]!.lines.find((line) => line.is_mention)?.number).toBe(496);
  });

  it('still merges a mention into the fiftieth window before truncating', () => {
    const mentions = [...Array.from({ length: 50 }, (_, i) => i * 10 + 5), 496];
    const { windows, truncated } = buildWindows({ lines }, mentions);
    expect([windows.length, truncated]).toEqual([50, false]);
  });

  it('holds at most MAX_WINDOW_LINES lines in all: a window merged over the whole transcript is cut there', () => {
    const long = transcriptLines(fillerLines(3 * MAX_WINDOW_LINES));
    const everyThird = Array.from({ length: long.length / 3 }, (_, i) => i * 3);
    const { windows, truncated } = buildWindows({ lines: long }, everyThird);
    expect(truncated).toBe(true);
    expect(numbersOf(windows)).toEqual([Array.from({ length: MAX_WINDOW_LINES }, (_, i) => i + 1)]);
    expect(windows[0]!.end_seconds).toBe(long[MAX_WINDOW_LINES - 1]!.end_seconds);
    expect(windows[0]!.lines.filter((line) => line.is_mention)).toHaveLength(Math.ceil(MAX_WINDOW_LINES / 3));
    // Fifty windows of context_lines=20 (the widest mentions allow) are not cut.
    const wide = buildWindows(
      { lines: long },
      Array.from({ length: 50 }, (_, i) => 20 + i * 45),
      20,
    );
    expect([wide.windows.length, wide.truncated]).toEqual([50, false]);
    expect(wide.windows.every((w) => w.lines.length === 41)).toBe(true);
  });

  it('holds at most MAX_WINDOW_CHARACTERS of line text in all, keeping each line whole, and drops a window cut before its mention', () => {
    const size = 100_000;
    const big = lines.slice(0, 40).map((line) => ({ ...line, text: 'x'.repeat(size) }));
    const fit = Math.floor(MAX_WINDOW_CHARACTERS / size);
    // One window of 21 lines (mentions 2..18), then one whose mention line no longer fits.
    const { windows, truncated } = buildWindows({ lines: big }, [2, 6, 10, 14, 18, 30]);
    expect(truncated).toBe(true);
    expect(windows).toHaveLength(1);
    expect(windows[0]!.lines).toHaveLength(fit);
    expect(windows[0]!.lines.every((line) => line.text.length === size)).toBe(true);
    expect(windows[0]!.lines.filter((line) => line.is_mention).map((line) => line.number)).toEqual([3]);
    // A window whose lines fit only up to its context before the mention is dropped whole: the
    // first holds 400,001 characters, the second's line 19 (1 character) fits, its line 20 not.
    const small = big.map((line, i) => (i === 0 || i === 18 ? { ...line, text: 'y' } : line));
    const cut = buildWindows({ lines: small }, [2, 20]);
    expect(cut.truncated).toBe(true);
    expect(numbersOf(cut.windows)).toEqual([[1, 2, 3, 4, 5]]);
  });

  it('names the segment by line range, else by time, and the clip overlapping the mention line', () => {
    const segments = [
      {
        id: 's1',
        title: 'Intro',
        type: 'INTRO',
        start_line: 1,
        end_line: 5,
        description: 'd1',
        summary: 'm1',
      },
      { id: 's2', title: 'Talk', type: 'INTERVIEW', start_seconds: 50, end_seconds: 1000 },
    ];
    const clips = [
      { id: 'c1', title: 'Low', type: 'FUNNY', start_seconds: 60, end_seconds: 90, engagement_score: 40 },
      {
        id: 'c2',
        title: 'High',
        type: 'SPICY',
        start_seconds: 65,
        end_seconds: 75,
        engagement_score: 90,
        description: 'cd',
        intro_statement: 'hook',
      },
    ];
    const { windows } = buildWindows({ lines, segments, clips }, [1, 7, 30]);
    expect(windows[0]).toMatchObject({
      segment_id: 's1',
      segment_title: 'Intro',
      segment_type: 'INTRO',
      segment_description: 'd1',
      segment_summary: 'm1',
    });
    expect(windows[0]!.clip_id).toBeUndefined();
    expect(windows[1]).toMatchObject({
      segment_id: 's2',
      segment_title: 'Talk',
      segment_type: 'INTERVIEW',
      clip_id: 'c2',
      clip_title: 'High',
      clip_type: 'SPICY',
      clip_description: 'cd',
      clip_intro_statement: 'hook',
    });
    expect(windows[2]!.clip_id).toBeUndefined();
    expect(windows[2]!.segment_id).toBe('s2');
  });

  it('copies at most MAX_WINDOW_TEXT characters of each segment and clip text into every window', () => {
    // 1,999 letters then astral characters: the cut falls inside them and must not split a pair.
    const long = (letter: string) => `${letter.repeat(MAX_WINDOW_TEXT - 1)}${'😀'.repeat(100_000)}`;
    const texts = { title: long('t'), description: long('d'), summary: long('s') };
    const segments = [{ id: 's1', ...texts, start_line: 1, end_line: 600 }];
    const clips = [
      {
        id: 'c1',
        title: long('c'),
        description: long('e'),
        intro_statement: long('i'),
        start_seconds: 0,
        end_seconds: 6000,
      },
    ];
    const mentionEvery10th = Array.from({ length: 60 }, (_, i) => i * 10);
    const { windows, truncated } = buildWindows({ lines, segments, clips }, mentionEvery10th);
    expect(truncated).toBe(true);
    expect(windows).toHaveLength(MAX_WINDOWS);
    const prefix = (text: string) => `${text.slice(0, MAX_WINDOW_TEXT - 1)}😀`;
    for (const window of windows)
      expect(window).toMatchObject({
        segment_title: prefix(texts.title),
        segment_description: prefix(texts.description),
        segment_summary: prefix(texts.summary),
        clip_title: prefix(clips[0]!.title),
        clip_description: prefix(clips[0]!.description),
        clip_intro_statement: prefix(clips[0]!.intro_statement),
      });
    // What a match holds is bounded by the windows' lines plus 6 cut texts a window, whatever was sent.
    const linesLength = JSON.stringify(windows.map((w) => w.lines)).length;
    expect(JSON.stringify(windows).length).toBeLessThan(
      linesLength + MAX_WINDOWS * 6 * 2 * (MAX_WINDOW_TEXT + 100),
    );
  });

  it('keeps a segment or clip text of MAX_WINDOW_TEXT characters whole', () => {
    const title = '😀'.repeat(MAX_WINDOW_TEXT);
    const { windows } = buildWindows(
      { lines, segments: [{ id: 's1', title, start_line: 1, end_line: 9 }] },
      [1],
    );
    expect(windows[0]!.segment_title).toBe(title);
  });

  it('names the clip the documented rule names, for any lines and clips', () => {
    // The rule as docs/matching.md states it, clip by clip for each mention line.
    const overlaps = (line: TranscriptLine, clip: EpisodeClip) =>
      line.start_seconds < clip.end_seconds! &&
      (line.end_seconds > clip.start_seconds! ||
        (line.end_seconds <= line.start_seconds && line.start_seconds >= clip.start_seconds!));
    const reference = (mentionLines: TranscriptLine[], clips: EpisodeClip[]) => {
      for (const line of mentionLines) {
        let best: EpisodeClip | undefined;
        for (const clip of clips) {
          if (clip.start_seconds === undefined || clip.end_seconds === undefined || !overlaps(line, clip))
            continue;
          if (best === undefined || (clip.engagement_score ?? 0) > (best.engagement_score ?? 0)) best = clip;
        }
        if (best !== undefined) return best.id;
      }
      return undefined;
    };
    const second = fc.integer({ min: 0, max: 12 });
    const span = fc.tuple(second, fc.integer({ min: -2, max: 4 })).map(([start, length]) => ({
      start_seconds: start,
      end_seconds: Math.max(0, start + length),
    }));
    const clip = fc.record(
      {
        span: fc.option(span, { nil: undefined }),
        score: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
      },
      { requiredKeys: ['span'] },
    );
    fc.assert(
      fc.property(
        fc.array(span, { minLength: 1, maxLength: 12 }),
        fc.array(clip, { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (spans, clipSpecs, picks) => {
          const lines = spans.map((s, i) => ({ number: i + 1, text: 'x', ...s }));
          const clips: EpisodeClip[] = clipSpecs.map(({ span, score }, i) => ({
            id: `c${i}`,
            title: 't',
            ...(span ?? {}),
            ...(score === undefined ? {} : { engagement_score: score }),
          })) as EpisodeClip[];
          const mentions = [...new Set(picks.map((p) => p % lines.length))].sort((a, b) => a - b);
          const { windows } = buildWindows({ lines, clips }, mentions);
          for (const window of windows) {
            const inWindow = window.lines.filter((l) => l.is_mention).map((l) => lines[l.number - 1]!);
            expect(window.clip_id).toBe(reference(inWindow, clips));
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('gives each line its role and speaker, from the line or from its speaker', () => {
    const speakersById = new Map<string, EpisodeSpeaker>([
      ['s1', { id: 's1', name: 'Co Host', role: 'co_host' }],
    ]);
    const withSpeakers = transcriptLines(['a', 'b', 'c'], (n) => (n === 2 ? 's1' : 'nobody'));
    withSpeakers[0]!.role = 'Guest';
    withSpeakers[0]!.speaker = 'Gary';
    const { windows } = buildWindows({ lines: withSpeakers, speakersById }, [1]);
    expect(windows[0]!.lines).toEqual([
      {
        number: 1,
        start_seconds: 0,
        end_seconds: 8,
        text: 'a',
        is_mention: false,
        role: 'GUEST',
        speaker: 'Gary',
      },
      {
        number: 2,
        start_seconds: 10,
        end_seconds: 18,
        text: 'b',
        is_mention: true,
        role: 'HOST',
        speaker: 'Co Host',
      },
      { number: 3, start_seconds: 20, end_seconds: 28, text: 'c', is_mention: false },
    ]);
  });

  it('gives no windows without mention lines', () => {
    expect(buildWindows({ lines }, [])).toEqual({ windows: [], truncated: false });
  });
});
