import {
  advanceEpisodeVersions,
  lastById,
  resetEpisodeVersions,
} from '../../src/catalog/episode-versions.ts';
import type { Queryable } from '../../src/db/db.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';

const NAME = 'segments';

/** A segment's seconds: as sent, else those of its first and last lines, else 0. */
function segmentRows(event: EpisodeTranscribed) {
  const lines = new Map((event.transcript?.lines ?? []).map((line) => [line.number, line]));
  return (event.segments ?? []).map((segment, i) => {
    const first = segment.start_line === undefined ? undefined : lines.get(segment.start_line);
    const last = segment.end_line === undefined ? undefined : lines.get(segment.end_line);
    return {
      id: segment.id,
      episode_id: event.episode.id,
      podcast_id: event.podcast.id,
      published_at: event.episode.published_at,
      number: segment.number ?? i + 1,
      title: segment.title ?? '',
      type: segment.type ?? null,
      description: segment.description ?? null,
      summary: segment.summary ?? null,
      audio_url: segment.audio_url ?? null,
      read_type: segment.read_type ?? null,
      start_line: segment.start_line ?? null,
      end_line: segment.end_line ?? null,
      start_seconds: segment.start_seconds ?? first?.start_seconds ?? 0,
      end_seconds: segment.end_seconds ?? last?.end_seconds ?? segment.start_seconds ?? 0,
    };
  });
}

/** Each episode's segments; a re-sent episode replaces them. */
export const segmentsProjection: Projection = {
  name: NAME,
  eventTypes: ['EpisodeTranscribed'],
  async apply(tx: Queryable, events: readonly RecordedEvent[]) {
    const episodes = await advanceEpisodeVersions(tx, NAME, events);
    if (episodes.length === 0) return;
    await tx.query('delete from segments where episode_id = any($1::text[])', [
      episodes.map((e) => e.episode.id),
    ]);
    const rows = lastById(episodes.flatMap(segmentRows));
    if (rows.length === 0) return;
    await tx.query(
      `insert into segments (id, episode_id, podcast_id, published_at, number, title, type, description, summary,
              audio_url, read_type, start_line, end_line, start_seconds, end_seconds)
       select r.id, r.episode_id, r.podcast_id, r.published_at, r.number, r.title, r.type, r.description,
              r.summary, r.audio_url, r.read_type, r.start_line, r.end_line, r.start_seconds, r.end_seconds
         from jsonb_to_recordset($1::jsonb) as r(id text, episode_id text, podcast_id text,
              published_at timestamptz, number integer, title text, type text, description text, summary text,
              audio_url text, read_type text, start_line integer, end_line integer, start_seconds float8,
              end_seconds float8)
       on conflict (id) do update set episode_id = excluded.episode_id, podcast_id = excluded.podcast_id,
              published_at = excluded.published_at, number = excluded.number, title = excluded.title,
              type = excluded.type, description = excluded.description, summary = excluded.summary,
              audio_url = excluded.audio_url, read_type = excluded.read_type, start_line = excluded.start_line, end_line = excluded.end_line,
              start_seconds = excluded.start_seconds, end_seconds = excluded.end_seconds`,
      [JSON.stringify(rows)],
    );
  },
  async reset(tx: Queryable) {
    await tx.query('delete from segments');
    await resetEpisodeVersions(tx, NAME);
  },
};
