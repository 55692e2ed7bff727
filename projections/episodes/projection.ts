import { eventLanguage } from '../../src/catalog/episode-language.ts';
import type { Queryable } from '../../src/db/db.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';

/**
 * The episodes read model. A re-sent episode replaces the stored one unless it is older
 * (occurred_at) than what is stored, so a late redelivery of an old version changes nothing.
 */
export const episodesProjection: Projection = {
  name: 'episodes',
  eventTypes: ['EpisodeTranscribed'],
  async apply(tx: Queryable, events: readonly RecordedEvent[]) {
    const latest = new Map<string, RecordedEvent<string, EpisodeTranscribed>>();
    for (const event of events as readonly RecordedEvent<string, EpisodeTranscribed>[]) {
      const seen = latest.get(event.data.episode.id);
      if (!seen || Date.parse(seen.data.occurred_at) <= Date.parse(event.data.occurred_at))
        latest.set(event.data.episode.id, event);
    }
    if (latest.size === 0) return;
    const rows = [...latest.values()].map(({ id, data }) => ({
      id: data.episode.id,
      podcast_id: data.podcast.id,
      published_at: data.episode.published_at,
      language: eventLanguage(data) ?? null,
      occurred_at: data.occurred_at,
      event_id: id,
      payload: data,
    }));
    await tx.query(
      `insert into episodes (id, podcast_id, published_at, language, occurred_at, event_id, payload)
       select r.id, r.podcast_id, r.published_at, r.language, r.occurred_at, r.event_id, r.payload
         from jsonb_to_recordset($1::jsonb) as r(id text, podcast_id text, published_at timestamptz,
              language text, occurred_at timestamptz, event_id text, payload jsonb)
       on conflict (id) do update set
              podcast_id = excluded.podcast_id, published_at = excluded.published_at,
              language = excluded.language, occurred_at = excluded.occurred_at,
              event_id = excluded.event_id, payload = excluded.payload, updated_at = now()
        where episodes.occurred_at <= excluded.occurred_at`,
      [JSON.stringify(rows)],
    );
  },
  async reset(tx: Queryable) {
    await tx.query('delete from episodes');
  },
};
