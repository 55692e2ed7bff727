import type { FastifyReply } from 'fastify';
import type { StoredLine } from '../../projections/transcripts/projection.ts';
import { problemResponses } from '../http/problem.ts';
import { compact } from './compact.ts';
import { transcriptSchema } from './schemas.ts';
import { joined, rendering } from './transcript-cache.ts';
import {
  CONTENT_TYPES,
  narrowLines,
  publicLine,
  TRANSCRIPT_FORMATS,
  type TranscriptFormat,
  toSrt,
  toText,
  toVtt,
  turnsOf,
} from './transcript-format.ts';

export interface TranscriptQuery {
  format: TranscriptFormat;
  speaker?: string;
  start?: number;
  end?: number;
}

export const transcriptQuery = {
  type: 'object',
  properties: {
    format: { enum: TRANSCRIPT_FORMATS, default: 'dialogue' },
    speaker: { type: 'string', minLength: 1, maxLength: 200 },
    start: { type: 'number', minimum: 0 },
    end: { type: 'number', minimum: 0 },
  },
} as const;

/** The 200 of a transcript route: JSON (dialogue) or text in the other formats. */
export const transcriptResponses = (...errors: number[]) => ({
  200: {
    description:
      'The transcript: JSON for dialogue; text/plain, application/x-subrip or text/vtt for the others',
    content: {
      'application/json': { schema: transcriptSchema },
      'text/plain': { schema: { type: 'string' } },
      'application/x-subrip': { schema: { type: 'string' } },
      'text/vtt': { schema: { type: 'string' } },
    },
  },
  ...problemResponses(...errors),
});

export interface TranscriptPart {
  episodeId: string;
  language: string | null;
  durationSeconds: number;
  lines: readonly StoredLine[];
  /** Part of the episode's transcript (a segment, a clip) rather than all of it. */
  excerpt: boolean;
  segment?: { id: string; start_seconds: number; end_seconds: number };
  clipId?: string;
}

/** Narrows the lines by speaker and time, then answers in the requested format. */
export function sendTranscript(reply: FastifyReply, part: TranscriptPart, query: TranscriptQuery) {
  const lines = narrowLines(part.lines, {
    ...(query.speaker === undefined ? {} : { speaker: query.speaker }),
    ...(query.start === undefined ? {} : { start: query.start }),
    ...(query.end === undefined ? {} : { end: query.end }),
  });
  const whole = !part.excerpt && lines.length === part.lines.length;
  if (query.format !== 'dialogue') {
    const format = query.format;
    const render = () => (format === 'text' ? toText(lines) : format === 'srt' ? toSrt(lines) : toVtt(lines));
    return reply
      .type(CONTENT_TYPES[format])
      .serializer((b: string) => b)
      .send(whole ? rendering(part.lines, format, render) : render());
  }
  const head = compact({
    episode_id: part.episodeId,
    language: part.language,
    duration_seconds: part.durationSeconds,
    excerpt: part.excerpt,
    segment_id: part.segment?.id,
    segment_start_seconds: part.segment?.start_seconds,
    segment_end_seconds: part.segment?.end_seconds,
    clip_id: part.clipId,
  });
  const body = () => ({ lines: lines.map(publicLine), turns: turnsOf(lines) });
  if (!whole) return reply.type('application/json; charset=utf-8').send({ ...head, ...body() });
  // The lines and turns of a whole transcript serialized once per version (transcript-cache.ts).
  return reply
    .type('application/json; charset=utf-8')
    .send(
      joined(
        part.lines,
        'dialogue',
        () => JSON.stringify(body()).slice(1),
        `${JSON.stringify(head).slice(0, -1)},`,
        '',
      ),
    );
}
