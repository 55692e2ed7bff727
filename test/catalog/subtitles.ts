/**
 * Our SubRip and WebVTT output read back by maintained parsers: `subtitle` for SubRip and the
 * w3c's `webvtt-parser`, a validator, for WebVTT. Both throw on anything the parser rejects;
 * SubRip also on cue numbers out of sequence and cues that do not end after they start, which
 * `subtitle` does not check.
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

export function parseSrt(body: string): Cue[] {
  if (!body.endsWith('\n')) throw new Error('an srt file ends with a newline');
  const cues = parseSync(body).map((node, i): Cue => {
    if (node.type !== 'cue') throw new Error(`node ${i + 1} is a ${node.type}, not a cue`);
    const { start, end, text } = node.data;
    return { id: String(i + 1), start: start / 1000, end: end / 1000, text };
  });
  const numbers = body
    .replace(/\n+$/, '')
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => block.split('\n', 1)[0]);
  if (numbers.length !== cues.length || numbers.some((n, i) => n !== String(i + 1)))
    throw new Error(`cues are not numbered 1…${cues.length}: ${numbers.slice(0, 5).join(', ')}`);
  for (const cue of cues) if (cue.end <= cue.start) throw new Error(`cue ${cue.id} ends before it starts`);
  return cues;
}

export function parseVtt(body: string): Cue[] {
  const { cues, errors } = new webvtt.WebVTTParser().parse(body);
  if (errors.length)
    throw new Error(`invalid WebVTT: ${errors.map((e) => `line ${e.line}: ${e.message}`).join('; ')}`);
  return cues.map((cue) => ({ id: cue.id, start: cue.startTime, end: cue.endTime, text: cue.text }));
}
