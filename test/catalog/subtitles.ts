/**
 * Our SubRip and WebVTT output read back by maintained parsers: `subtitle` for SubRip and the
 * w3c's `webvtt-parser`, a validator, for WebVTT. Both throw on anything the parser rejects;
 * SubRip also on what `subtitle` lets through and the format does not allow: cue numbers out of
 * sequence, timings not `HH:MM:SS,mmm` (it takes `.` and single digits), cues without text, and
 * cues that do not end after they start.
 */
import { parseSync } from 'subtitle';
import webvtt from 'webvtt-parser';

export interface Cue {
  id: string;
  /** Seconds. */
  start: number;
  end: number;
  text: string;
}

const SRT_TIME = '\\d{2,}:[0-5]\\d:[0-5]\\d,\\d{3}';
const SRT_TIMING = new RegExp(`^${SRT_TIME} --> ${SRT_TIME}$`);

export function parseSrt(body: string): Cue[] {
  if (!body.endsWith('\n')) throw new Error('an srt file ends with a newline');
  const cues = parseSync(body).map((node, i): Cue => {
    if (node.type !== 'cue') throw new Error(`node ${i + 1} is a ${node.type}, not a cue`);
    const { start, end, text } = node.data;
    return { id: String(i + 1), start: start / 1000, end: end / 1000, text };
  });
  const blocks = body
    .replace(/\n+$/, '')
    .split('\n\n')
    .filter((block) => block !== '');
  if (blocks.length !== cues.length) throw new Error(`${blocks.length} blocks but ${cues.length} cues`);
  blocks.forEach((block, i) => {
    const [number, timing, ...text] = block.split('\n');
    if (number !== String(i + 1)) throw new Error(`cue ${i + 1} is numbered ${number}`);
    if (!SRT_TIMING.test(timing ?? '')) throw new Error(`cue ${number} has the timing ${timing}`);
    if (!text.some((line) => line.trim() !== '')) throw new Error(`cue ${number} has no text`);
  });
  for (const cue of cues) if (cue.end <= cue.start) throw new Error(`cue ${cue.id} ends before it starts`);
  return cues;
}

export function parseVtt(body: string): Cue[] {
  const { cues, errors } = new webvtt.WebVTTParser().parse(body);
  if (errors.length)
    throw new Error(`invalid WebVTT: ${errors.map((e) => `line ${e.line}: ${e.message}`).join('; ')}`);
  return cues.map((cue) => ({
    id: cue.id,
    start: cue.startTime,
    end: cue.endTime,
    text: cue.text,
  }));
}
