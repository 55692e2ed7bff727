import { describe, expect, it } from 'vitest';
import type { EpisodeSpeaker } from '../../../src/ingestion/events.ts';
import { buildWindows } from '../../../src/matching/engine/windows.ts';
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
