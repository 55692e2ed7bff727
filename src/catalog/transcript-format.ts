import type { StoredLine } from '../../projections/transcripts/projection.ts';

/** The transcript formats of every /transcript endpoint (docs/catalog.md, "Transcripts"). */
export const TRANSCRIPT_FORMATS = ['dialogue', 'text', 'srt', 'vtt'] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

export const CONTENT_TYPES: Record<Exclude<TranscriptFormat, 'dialogue'>, string> = {
  text: 'text/plain; charset=utf-8',
  srt: 'application/x-subrip; charset=utf-8',
  vtt: 'text/vtt; charset=utf-8',
};

export interface LineWindow {
  /** Only lines of this speaker (name or speaker id, case-insensitive). */
  speaker?: string;
  /** Only lines that end after start and begin before end (seconds). */
  start?: number;
  end?: number;
  /** Only lines numbered within [firstLine, lastLine]. */
  firstLine?: number;
  lastLine?: number;
}

/** The lines the window admits, in order; the same array when nothing narrows it (no copy of a whole transcript). */
export function narrowLines(lines: readonly StoredLine[], w: LineWindow): readonly StoredLine[] {
  if (
    w.speaker === undefined &&
    w.start === undefined &&
    w.end === undefined &&
    w.firstLine === undefined &&
    w.lastLine === undefined
  )
    return lines;
  const speaker = w.speaker?.trim().toLowerCase();
  return lines.filter(
    (line) =>
      (w.firstLine === undefined || line.number >= w.firstLine) &&
      (w.lastLine === undefined || line.number <= w.lastLine) &&
      (w.start === undefined || line.end_seconds > w.start) &&
      (w.end === undefined || line.start_seconds < w.end) &&
      (speaker === undefined ||
        line.speaker?.toLowerCase() === speaker ||
        line.speaker_id?.toLowerCase() === speaker),
  );
}

export interface Turn {
  speaker?: string | undefined;
  role?: string | undefined;
  start_seconds: number;
  end_seconds: number;
  first_line: number;
  last_line: number;
  text: string;
}

/** Consecutive lines of one speaker, joined. Absent speaker and role stay undefined (omitted in JSON). */
export function turnsOf(lines: readonly StoredLine[]): Turn[] {
  const turns: Turn[] = [];
  let lastWho: string | undefined;
  let last: Turn | undefined;
  for (const line of lines) {
    const who = line.speaker_id ?? line.speaker;
    if (last && who !== undefined && who === lastWho) {
      if (line.end_seconds > last.end_seconds) last.end_seconds = line.end_seconds;
      last.last_line = line.number;
      last.text += ` ${line.text}`;
      continue;
    }
    lastWho = who;
    last = {
      speaker: line.speaker,
      role: line.role,
      start_seconds: line.start_seconds,
      end_seconds: line.end_seconds,
      first_line: line.number,
      last_line: line.number,
      text: line.text,
    };
    turns.push(last);
  }
  return turns;
}

/** The line as the client sees it: no producer speaker id; absent speaker and role stay undefined. */
export const publicLine = (line: StoredLine) => ({
  number: line.number,
  speaker: line.speaker,
  role: line.role,
  start_seconds: line.start_seconds,
  end_seconds: line.end_seconds,
  text: line.text,
});

const oneLine = (text: string) => text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
/** Cue text: one line, and never the timing arrow, which would end the cue early in some readers. */
const cueText = (text: string) => oneLine(text).replaceAll('-->', '->') || '…';

const two = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const three = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

function clock(seconds: number, separator: ',' | '.') {
  const ms = Math.round(seconds * 1000);
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  return `${two(h)}:${two(m)}:${two(s)}${separator}${three(ms % 1000)}`;
}

/** Cue times: a cue must end after it starts, so a zero-length line lasts one millisecond. */
const cueEnd = (line: StoredLine) => Math.max(line.end_seconds, line.start_seconds + 0.001);

export function toText(lines: readonly StoredLine[]): string {
  return turnsOf(lines)
    .map((turn) => (turn.speaker ? `${turn.speaker}: ${oneLine(turn.text)}` : oneLine(turn.text)))
    .join('\n\n')
    .concat(lines.length ? '\n' : '');
}

/** SubRip: one cue a line, numbered from 1, the speaker's name before the text. */
export function toSrt(lines: readonly StoredLine[]): string {
  return lines
    .map((line, i) => {
      const text = cueText(line.text);
      return `${i + 1}\n${clock(line.start_seconds, ',')} --> ${clock(cueEnd(line), ',')}\n${
        line.speaker ? `${oneLine(line.speaker)}: ` : ''
      }${text}\n`;
    })
    .join('\n');
}

const vttEscape = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** WebVTT: one cue a line, its number as the cue id, the speaker as a voice span. */
export function toVtt(lines: readonly StoredLine[]): string {
  const cues = lines.map((line) => {
    const text = vttEscape(cueText(line.text));
    const voice = line.speaker ? `<v ${vttEscape(oneLine(line.speaker))}>` : '';
    return `${line.number}\n${clock(line.start_seconds, '.')} --> ${clock(cueEnd(line), '.')}\n${voice}${text}\n`;
  });
  return ['WEBVTT\n', ...cues].join('\n');
}
