/**
 * Strict readers of SubRip and WebVTT for the tests. A maintained parser (e.g. `subtitle`) is not
 * installed; these follow the formats' grammar closely and throw on anything out of shape.
 */
export interface Cue {
  id: string;
  start: number;
  end: number;
  text: string;
}

const time = (value: string, separator: ',' | '.') => {
  const match = new RegExp(`^(\\d{2,}):([0-5]\\d):([0-5]\\d)\\${separator}(\\d{3})$`).exec(value);
  if (!match) throw new Error(`bad timestamp ${JSON.stringify(value)}`);
  const [h, m, s, ms] = match.slice(1).map(Number);
  return h! * 3600 + m! * 60 + s! + ms! / 1000;
};

function cues(blocks: string[], separator: ',' | '.', numbered: boolean): Cue[] {
  return blocks.map((block, i) => {
    const lines = block.split('\n');
    if (lines.length < 3) throw new Error(`cue ${i + 1} has ${lines.length} lines`);
    const [id, timing, ...text] = lines as [string, string, ...string[]];
    if (numbered && id !== String(i + 1)) throw new Error(`cue ${i + 1} is numbered ${id}`);
    const parts = timing.split(' --> ');
    if (parts.length !== 2) throw new Error(`bad timing line ${JSON.stringify(timing)}`);
    const start = time(parts[0]!, separator);
    const end = time(parts[1]!, separator);
    if (end <= start) throw new Error(`cue ${id} ends before it starts`);
    if (text.some((t) => t.trim() === '' || t.includes('-->')))
      throw new Error(`cue ${id} has a bad text line`);
    return { id, start, end, text: text.join('\n') };
  });
}

export function parseSrt(body: string): Cue[] {
  if (!body.endsWith('\n')) throw new Error('an srt file ends with a newline');
  const trimmed = body.replace(/\n+$/, '');
  return trimmed === '' ? [] : cues(trimmed.split('\n\n'), ',', true);
}

export function parseVtt(body: string): Cue[] {
  const [header, ...blocks] = body.replace(/\n+$/, '').split('\n\n');
  if (header !== 'WEBVTT') throw new Error(`bad header ${JSON.stringify(header)}`);
  const parsed = cues(blocks, '.', false);
  for (const cue of parsed)
    if (/[<>]/.test(cue.text.replace(/^<v [^>]+>/, '')) || /&(?!amp;|lt;|gt;)/.test(cue.text))
      throw new Error(`cue ${cue.id} has unescaped markup`);
  return parsed;
}
