import type { EpisodeClip, EpisodeSegment, EpisodeSpeaker, TranscriptLine } from '../../ingestion/events.ts';
import type { MatchWindow, WindowLine } from '../types.ts';
import { normaliseSpeakerRole, type SpeakerRole } from './roles.ts';

/** Lines of context before and after each mention line (docs/matching.md, Windows). */
export const WINDOW_CONTEXT_LINES = 2;
/** Windows kept per match; more set `truncated`. */
export const MAX_WINDOWS = 50;

export interface WindowSources {
  lines: readonly TranscriptLine[];
  segments?: readonly EpisodeSegment[];
  clips?: readonly EpisodeClip[];
  speakersById?: ReadonlyMap<string, EpisodeSpeaker>;
}

/**
 * Windows around mention lines. `mentionIndexes` are positions in `lines` (not line numbers),
 * ascending and distinct. Each mention line takes `contextLines` lines either side, clamped
 * at the transcript's edges; windows that overlap or touch merge into one. After MAX_WINDOWS the
 * rest are dropped and `truncated` is true.
 */
export function buildWindows(
  sources: WindowSources,
  mentionIndexes: readonly number[],
  contextLines = WINDOW_CONTEXT_LINES,
): { windows: MatchWindow[]; truncated: boolean } {
  const { lines } = sources;
  const ranges: { first: number; last: number; mentions: number[] }[] = [];
  let truncated = false;
  for (const index of mentionIndexes) {
    const first = Math.max(0, index - contextLines);
    const last = Math.min(lines.length - 1, index + contextLines);
    const current = ranges[ranges.length - 1];
    if (current !== undefined && first <= current.last + 1) {
      current.last = Math.max(current.last, last);
      current.mentions.push(index);
    } else if (ranges.length === MAX_WINDOWS) {
      truncated = true;
      break;
    } else ranges.push({ first, last, mentions: [index] });
  }
  const windows = ranges.map(({ first, last, mentions }) => {
    const mentionSet = new Set(mentions);
    const windowLines: WindowLine[] = [];
    for (let k = first; k <= last; k++) windowLines.push(windowLine(lines[k]!, mentionSet.has(k), sources));
    const window: MatchWindow = {
      start_seconds: lines[first]!.start_seconds,
      end_seconds: lines[last]!.end_seconds,
      lines: windowLines,
    };
    const mentionLines = mentions.map((k) => lines[k]!);
    const segment = segmentOf(mentionLines[0]!, sources.segments ?? []);
    if (segment !== undefined) {
      window.segment_id = segment.id;
      assignDefined(window, 'segment_title', segment.title);
      assignDefined(window, 'segment_description', segment.description);
      assignDefined(window, 'segment_summary', segment.summary);
      assignDefined(window, 'segment_type', segment.type);
    }
    const clip = clipOf(mentionLines, sources.clips ?? []);
    if (clip !== undefined) {
      window.clip_id = clip.id;
      assignDefined(window, 'clip_title', clip.title);
      assignDefined(window, 'clip_description', clip.description);
      assignDefined(window, 'clip_intro_statement', clip.intro_statement);
      assignDefined(window, 'clip_type', clip.type);
    }
    return window;
  });
  return { windows, truncated };
}

function assignDefined<K extends keyof MatchWindow>(
  window: MatchWindow,
  key: K,
  value: MatchWindow[K] | undefined,
) {
  if (value !== undefined) window[key] = value;
}

/** A line's role: its own, else its speaker's (CO_HOST read as HOST); absent when unknown. */
export function lineRole(
  line: TranscriptLine,
  speakersById?: ReadonlyMap<string, EpisodeSpeaker>,
): SpeakerRole | undefined {
  const own = normaliseSpeakerRole(line.role);
  if (own !== undefined) return own;
  if (line.speaker_id === undefined) return undefined;
  return normaliseSpeakerRole(speakersById?.get(line.speaker_id)?.role);
}

function windowLine(line: TranscriptLine, isMention: boolean, sources: WindowSources): WindowLine {
  const out: WindowLine = {
    number: line.number,
    start_seconds: line.start_seconds,
    end_seconds: line.end_seconds,
    text: line.text,
    is_mention: isMention,
  };
  const role = lineRole(line, sources.speakersById);
  if (role !== undefined) out.role = role;
  const speaker =
    line.speaker ??
    (line.speaker_id === undefined ? undefined : sources.speakersById?.get(line.speaker_id)?.name);
  if (speaker !== undefined) out.speaker = speaker;
  return out;
}

/** The segment holding the line: by line range when the segment records one, else by time. */
function segmentOf(line: TranscriptLine, segments: readonly EpisodeSegment[]): EpisodeSegment | undefined {
  for (const segment of segments) {
    if (segment.start_line !== undefined && segment.end_line !== undefined) {
      if (line.number >= segment.start_line && line.number <= segment.end_line) return segment;
    } else if (segment.start_seconds !== undefined && segment.end_seconds !== undefined) {
      if (line.start_seconds >= segment.start_seconds && line.start_seconds < segment.end_seconds)
        return segment;
    }
  }
  return undefined;
}

/** The clip overlapping the window's earliest mention line that overlaps any; highest engagement wins. */
function clipOf(
  mentionLines: readonly TranscriptLine[],
  clips: readonly EpisodeClip[],
): EpisodeClip | undefined {
  for (const line of mentionLines) {
    let best: EpisodeClip | undefined;
    for (const clip of clips) {
      if (clip.start_seconds === undefined || clip.end_seconds === undefined) continue;
      if (!overlaps(line, clip.start_seconds, clip.end_seconds)) continue;
      if (best === undefined || (clip.engagement_score ?? 0) > (best.engagement_score ?? 0)) best = clip;
    }
    if (best !== undefined) return best;
  }
  return undefined;
}

/** Half-open overlap of the line's span with [start, end); a zero-length line counts when inside. */
function overlaps(line: TranscriptLine, start: number, end: number): boolean {
  if (line.start_seconds >= end) return false;
  return line.end_seconds > start || (line.end_seconds <= line.start_seconds && line.start_seconds >= start);
}
