import type { EpisodeClip, EpisodeSegment, EpisodeSpeaker, TranscriptLine } from '../../ingestion/events.ts';
import type { MatchWindow, WindowLine } from '../types.ts';
import { normaliseSpeakerRole, type SpeakerRole } from './roles.ts';

/** Lines of context before and after each mention line (docs/matching.md, Windows). */
export const WINDOW_CONTEXT_LINES = 2;
/** Windows kept per match; more set `truncated`. */
export const MAX_WINDOWS = 50;
/**
 * Characters of a segment's or clip's title, description, summary or intro statement that a window
 * copies. The event does not bound these texts, and every window in the segment or clip copies them:
 * uncut, one 9 MB episode made each of its matches 450 million characters of JSON (docs/matching.md,
 * Windows).
 */
export const MAX_WINDOW_TEXT = 2_000;

/**
 * Lines, and characters of line text, that a match's windows hold in all; past either the rest are
 * dropped and `truncated` is true. Windows that touch merge without limit, so an entity named every
 * few lines made one window of the whole transcript: 13.7 million characters a match for a
 * 100,000-line episode, copied into every alert's match (docs/matching.md, Windows). Bounds far
 * above what 50 windows of ordinary lines hold (50 × 41 lines at `context_lines=20`).
 */
export const MAX_WINDOW_LINES = 2_500;
export const MAX_WINDOW_CHARACTERS = 500_000;

export interface WindowSources {
  lines: readonly TranscriptLine[];
  segments?: readonly EpisodeSegment[];
  clips?: readonly EpisodeClip[];
  speakersById?: ReadonlyMap<string, EpisodeSpeaker>;
}

/**
 * Windows around mention lines. `mentionIndexes` are positions in `lines` (not line numbers),
 * ascending and distinct. Each mention line takes `contextLines` lines either side, clamped
 * at the transcript's edges; windows that overlap or touch merge into one. After MAX_WINDOWS, or
 * past MAX_WINDOW_LINES or MAX_WINDOW_CHARACTERS, the rest are dropped and `truncated` is true.
 */
export function buildWindows(
  sources: WindowSources,
  mentionIndexes: readonly number[],
  contextLines = WINDOW_CONTEXT_LINES,
): { windows: MatchWindow[]; truncated: boolean } {
  const { lines } = sources;
  const ranges: { first: number; last: number; mentions: number[] }[] = [];
  const clips = clipIndex(sources.clips ?? []);
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
  const windows: MatchWindow[] = [];
  let linesLeft = MAX_WINDOW_LINES;
  let charactersLeft = MAX_WINDOW_CHARACTERS;
  for (const range of ranges) {
    // The budget cuts the window after its last line that fits; one cut before its first mention is dropped.
    let end = range.first - 1;
    while (end < range.last && linesLeft > 0 && lines[end + 1]!.text.length <= charactersLeft) {
      end++;
      linesLeft--;
      charactersLeft -= lines[end]!.text.length;
    }
    const mentions = range.mentions.filter((k) => k <= end);
    if (mentions.length > 0) windows.push(windowOf(sources, clips, range.first, end, mentions));
    if (end < range.last) {
      truncated = true;
      break;
    }
  }
  return { windows, truncated };
}

/** The window of lines first..last around its mention lines, with the segment and clip it falls in. */
function windowOf(
  sources: WindowSources,
  clips: ClipIndex,
  first: number,
  last: number,
  mentions: readonly number[],
): MatchWindow {
  const { lines } = sources;
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
    assignDefined(window, 'segment_title', cutText(segment.title));
    assignDefined(window, 'segment_description', cutText(segment.description));
    assignDefined(window, 'segment_summary', cutText(segment.summary));
    assignDefined(window, 'segment_type', segment.type);
  }
  const clip = clipOf(mentionLines, clips);
  if (clip !== undefined) {
    window.clip_id = clip.id;
    assignDefined(window, 'clip_title', cutText(clip.title));
    assignDefined(window, 'clip_description', cutText(clip.description));
    assignDefined(window, 'clip_intro_statement', cutText(clip.intro_statement));
    assignDefined(window, 'clip_type', clip.type);
  }
  return window;
}

/** The text's first MAX_WINDOW_TEXT characters (code points: a surrogate pair is never split). */
function cutText(text: string | undefined): string | undefined {
  if (text === undefined || text.length <= MAX_WINDOW_TEXT) return text;
  let end = 0;
  let count = 0;
  for (const ch of text) {
    if (count === MAX_WINDOW_TEXT) break;
    end += ch.length;
    count++;
  }
  return text.slice(0, end);
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

/**
 * The clips with a time range, by start, with the largest end among each prefix: a line overlaps
 * some clip exactly when a clip starting before the line ends (at or before the line's start, for a
 * zero-length line) ends after the line starts. Scanning every clip for every mention line instead
 * cost 1 s for a window of 100,000 lines beside 1,000 clips that overlap none of them.
 */
interface ClipIndex {
  /** With each clip's place in the event: between equal engagement scores the earlier one wins. */
  clips: { clip: EpisodeClip; start: number; end: number; order: number }[];
  maxEnd: number[];
}

function clipIndex(clips: readonly EpisodeClip[]): ClipIndex {
  const timed: ClipIndex['clips'] = [];
  clips.forEach((clip, order) => {
    if (clip.start_seconds !== undefined && clip.end_seconds !== undefined)
      timed.push({ clip, start: clip.start_seconds, end: clip.end_seconds, order });
  });
  timed.sort((a, b) => a.start - b.start);
  const maxEnd: number[] = [];
  for (const { end } of timed) maxEnd.push(Math.max(maxEnd[maxEnd.length - 1] ?? -Infinity, end));
  return { clips: timed, maxEnd };
}

/** How many clips (a prefix of the index) start early enough to overlap the line. */
function startingBefore(index: ClipIndex, line: TranscriptLine): number {
  const zeroLength = line.end_seconds <= line.start_seconds;
  let low = 0;
  let high = index.clips.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    const start = index.clips[mid]!.start;
    if (zeroLength ? start <= line.start_seconds : start < line.end_seconds) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** The clip overlapping the window's earliest mention line that overlaps any; highest engagement wins. */
function clipOf(mentionLines: readonly TranscriptLine[], index: ClipIndex): EpisodeClip | undefined {
  for (const line of mentionLines) {
    const count = startingBefore(index, line);
    if (count === 0 || index.maxEnd[count - 1]! <= line.start_seconds) continue;
    let best: ClipIndex['clips'][number] | undefined;
    for (let i = 0; i < count; i++) {
      const candidate = index.clips[i]!;
      if (!overlaps(line, candidate.start, candidate.end)) continue;
      const score = candidate.clip.engagement_score ?? 0;
      const bestScore = best?.clip.engagement_score ?? 0;
      if (best === undefined || score > bestScore || (score === bestScore && candidate.order < best.order))
        best = candidate;
    }
    if (best !== undefined) return best.clip;
  }
  return undefined;
}

/** Half-open overlap of the line's span with [start, end); a zero-length line counts when inside. */
function overlaps(line: TranscriptLine, start: number, end: number): boolean {
  if (line.start_seconds >= end) return false;
  return line.end_seconds > start || (line.end_seconds <= line.start_seconds && line.start_seconds >= start);
}
