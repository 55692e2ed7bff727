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

/** Each transcribed episode's lines; a re-sent episode replaces them (or removes them when it has none). */
export const transcriptsProjection: Projection = {
  name: NAME,
  eventTypes: ['EpisodeTranscribed'],
  async apply(tx: Queryable, events: readonly RecordedEvent[]) {
    const episodes = await advanceEpisodeVersions(tx, NAME, events);
    if (episodes.length === 0) return;
    const ids = episodes.map((e) => e.episode.id);
    await tx.query('delete from transcripts where episode_id = any($1::text[])', [ids]);
    await tx.query('delete from transcript_chunks where episode_id = any($1::text[])', [ids]);
    const rows = episodes
      .filter((e) => (e.transcript?.lines?.length ?? 0) > 0)
      .map((e) => ({
        episode_id: e.episode.id,
        podcast_id: e.podcast.id,
        language: e.transcript?.language ?? e.episode.language ?? null,
        lines: storedLines(e),
      }));
    if (rows.length === 0) return;
    await tx.query(
      `insert into transcripts (episode_id, podcast_id, language, lines)
       select r.episode_id, r.podcast_id, r.language, r.lines
         from json_to_recordset($1::json) as r(episode_id text, podcast_id text, language text, lines json)`,
      [JSON.stringify(rows)],
    );
    const chunks = rows.flatMap(({ episode_id, lines }) =>
      Array.from({ length: Math.ceil(lines.length / CHUNK_LINES) }, (_, chunk) => ({
        episode_id,
        chunk,
        lines: lines.slice(chunk * CHUNK_LINES, (chunk + 1) * CHUNK_LINES),
      })),
    );
    await tx.query(
      `insert into transcript_chunks (episode_id, chunk, lines)
       select r.episode_id, r.chunk, r.lines
         from json_to_recordset($1::json) as r(episode_id text, chunk int, lines json)`,
      [JSON.stringify(chunks)],
    );
  },
  async reset(tx: Queryable) {
    await tx.query('delete from transcripts');
    await tx.query('delete from transcript_chunks');
    await resetEpisodeVersions(tx, NAME);
  },
};
