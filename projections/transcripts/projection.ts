import { advanceEpisodeVersions, resetEpisodeVersions } from '../../src/catalog/episode-versions.ts';
import type { Queryable } from '../../src/db/db.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import { normaliseSpeakerRole } from '../../src/matching/engine/roles.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';

const NAME = 'transcripts';
/** Lines per row of transcript_chunks: a result reads only the chunks of the lines it shows. */
export const CHUNK_LINES = 16;

/** A stored transcript line: the wire line with its role folded into the closed set. */
export interface StoredLine {
  number: number;
  speaker_id?: string;
  speaker?: string;
  role?: string;
  start_seconds: number;
  end_seconds: number;
  text: string;
}

/** The wire lines in number order: a line's position here is its position in every read model. */
export const linesInOrder = (event: EpisodeTranscribed) =>
  [...(event.transcript?.lines ?? [])].sort((a, b) => a.number - b.number);

export function storedLines(event: EpisodeTranscribed): StoredLine[] {
  const names = new Map((event.speakers ?? []).flatMap((s) => (s.id && s.name ? [[s.id, s.name]] : [])));
  const roles = new Map((event.speakers ?? []).flatMap((s) => (s.id && s.role ? [[s.id, s.role]] : [])));
  return linesInOrder(event).map((line) => {
    const speaker = line.speaker ?? (line.speaker_id ? names.get(line.speaker_id) : undefined);
    const role = normaliseSpeakerRole(
      line.role ?? (line.speaker_id ? roles.get(line.speaker_id) : undefined),
    );
    return {
      number: line.number,
      ...(line.speaker_id ? { speaker_id: line.speaker_id } : {}),
      ...(speaker ? { speaker } : {}),
      ...(role ? { role } : {}),
      start_seconds: line.start_seconds,
      end_seconds: line.end_seconds,
      text: line.text,
    };
  });
}

/** The rows of transcript_chunks of one transcript: its lines in order, CHUNK_LINES to a row, as JSON. */
const chunksOf = (lines: readonly StoredLine[]) =>
  Array.from({ length: Math.ceil(lines.length / CHUNK_LINES) }, (_, chunk) =>
    JSON.stringify(lines.slice(chunk * CHUNK_LINES, (chunk + 1) * CHUNK_LINES)),
  );

/**
 * Each transcribed episode's lines, stored once, in chunks; a re-sent episode replaces them (or
 * removes them when it has none). The chunks travel as one text, a line feed between them (JSON
 * escapes every line feed inside), and are stored as text: PostgreSQL parses no JSON on the way in
 * (docs/catalog.md, "Read models").
 */
export const transcriptsProjection: Projection = {
  name: NAME,
  eventTypes: ['EpisodeTranscribed'],
  async apply(tx: Queryable, events: readonly RecordedEvent[]) {
    const episodes = await advanceEpisodeVersions(tx, NAME, events);
    if (episodes.length === 0) return;
    await tx.query(
      `with gone as (delete from transcripts where episode_id = any($1::text[]))
       delete from transcript_chunks where episode_id = any($1::text[])`,
      [episodes.map((e) => e.episode.id)],
    );
    const transcribed = episodes.filter((e) => (e.transcript?.lines?.length ?? 0) > 0);
    if (transcribed.length === 0) return;
    const owners: string[] = [];
    const numbers: number[] = [];
    const chunks: string[] = [];
    for (const event of transcribed)
      for (const [number, chunk] of chunksOf(storedLines(event)).entries()) {
        owners.push(event.episode.id);
        numbers.push(number);
        chunks.push(chunk);
      }
    await tx.query(
      `with transcript as (
         insert into transcripts (episode_id, podcast_id, language)
         select * from unnest($1::text[], $2::text[], $3::text[]))
       insert into transcript_chunks (episode_id, chunk, lines)
       select o.episode_id, o.chunk, c.lines
         from unnest($4::text[], $5::int[]) with ordinality as o(episode_id, chunk, n)
         join string_to_table($6::text, E'\\n') with ordinality as c(lines, n) using (n)`,
      [
        transcribed.map((e) => e.episode.id),
        transcribed.map((e) => e.podcast.id),
        transcribed.map((e) => e.transcript?.language ?? e.episode.language ?? null),
        owners,
        numbers,
        chunks.join('\n'),
      ],
    );
  },
  async reset(tx: Queryable) {
    await tx.query('delete from transcripts');
    await tx.query('delete from transcript_chunks');
    await resetEpisodeVersions(tx, NAME);
  },
};
