import {
  advanceEpisodeVersions,
  lastById,
  resetEpisodeVersions,
} from '../../src/catalog/episode-versions.ts';
import type { Queryable } from '../../src/db/db.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import { speakerRoleOrUnknown } from '../../src/matching/engine/roles.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';

const NAME = 'clips';

function clipRows(event: EpisodeTranscribed) {
  const speakers = new Map((event.speakers ?? []).flatMap((s) => (s.id ? [[s.id, s]] : [])));
  return (event.clips ?? []).map((clip) => {
    const speaker = clip.speaker_id ? speakers.get(clip.speaker_id) : undefined;
    return {
      id: clip.id,
      episode_id: event.episode.id,
      podcast_id: event.podcast.id,
      published_at: event.episode.published_at,
      title: clip.title ?? '',
      type: clip.type ?? null,
      start_seconds: clip.start_seconds ?? 0,
      end_seconds: clip.end_seconds ?? clip.start_seconds ?? 0,
      engagement_score: clip.engagement_score ?? 0,
      description: clip.description ?? null,
      intro_statement: clip.intro_statement ?? null,
      audio_url: clip.audio_url ?? null,
      segment_id: clip.segment_id ?? null,
      speaker: speaker
        ? {
            id: speaker.id,
            name: speaker.name,
            role: speakerRoleOrUnknown(speaker.role),
            entity_id: speaker.entity_id,
            person_id: speaker.person_id,
          }
        : null,
    };
  });
}

/** Each episode's clips; a re-sent episode replaces them. */
export const clipsProjection: Projection = {
  name: NAME,
  eventTypes: ['EpisodeTranscribed'],
  async apply(tx: Queryable, events: readonly RecordedEvent[]) {
    const episodes = await advanceEpisodeVersions(tx, NAME, events);
    if (episodes.length === 0) return;
    await tx.query('delete from clips where episode_id = any($1::text[])', [
      episodes.map((e) => e.episode.id),
    ]);
    const rows = lastById(episodes.flatMap(clipRows));
    if (rows.length === 0) return;
    await tx.query(
      `insert into clips (id, episode_id, podcast_id, published_at, title, type, start_seconds, end_seconds,
              engagement_score, description, intro_statement, audio_url, segment_id, speaker)
       select r.id, r.episode_id, r.podcast_id, r.published_at, r.title, r.type, r.start_seconds, r.end_seconds,
              r.engagement_score, r.description, r.intro_statement, r.audio_url, r.segment_id, r.speaker
         from jsonb_to_recordset($1::jsonb) as r(id text, episode_id text, podcast_id text,
              published_at timestamptz, title text, type text, start_seconds float8, end_seconds float8,
              engagement_score integer, description text, intro_statement text, audio_url text,
              segment_id text, speaker jsonb)
       on conflict (id) do update set episode_id = excluded.episode_id, podcast_id = excluded.podcast_id,
              published_at = excluded.published_at, title = excluded.title, type = excluded.type,
              start_seconds = excluded.start_seconds, end_seconds = excluded.end_seconds,
              engagement_score = excluded.engagement_score, description = excluded.description,
              intro_statement = excluded.intro_statement, audio_url = excluded.audio_url,
              segment_id = excluded.segment_id, speaker = excluded.speaker`,
      [JSON.stringify(rows)],
    );
  },
  async reset(tx: Queryable) {
    await tx.query('delete from clips');
    await resetEpisodeVersions(tx, NAME);
  },
};
