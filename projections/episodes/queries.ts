import { exactInstant } from '../../src/catalog/sql.ts';
import type { Queryable } from '../../src/db/db.ts';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';

interface EpisodeRow {
  id: string;
  /** published_at to the microsecond, the keyset position (a Date would drop them and skip episodes). */
  published_position: string;
  event_id: string;
  payload: EpisodeTranscribed;
  show_language: string | null;
}

export interface StoredEpisode {
  eventId: string;
  episode: EpisodeTranscribed;
  /** The show's language in the podcasts read model now (docs/catalog.md, "An episode's language"). */
  showLanguage: string | null;
}

const SHOW_LANGUAGE = '(select p.language from podcasts p where p.id = episodes.podcast_id) as show_language';

const storedEpisode = (row: Pick<EpisodeRow, 'event_id' | 'payload' | 'show_language'>): StoredEpisode => ({
  eventId: row.event_id,
  episode: row.payload,
  showLanguage: row.show_language,
});

async function pagePublishedBetween(
  db: Queryable,
  from: Date,
  to: Date,
  after: EpisodeRow | undefined,
  pageSize: number,
): Promise<EpisodeRow[]> {
  const { rows } = await db.query<EpisodeRow>(
    `select id, ${exactInstant('published_at')} as published_position, event_id, payload,
            ${SHOW_LANGUAGE} from episodes
      where published_at >= $1::timestamptz and published_at < $2::timestamptz
        and ($3::timestamptz is null or (published_at, id) < ($3::timestamptz, $4::text))
      order by published_at desc, id desc
      limit $5::int`,
    [from, to, after?.published_position ?? null, after?.id ?? null, pageSize],
  );
  return rows;
}

/** Episodes published in [from, to), newest first, read a page at a time. */
export async function* episodesPublishedBetween(
  db: Queryable,
  from: Date,
  to: Date,
  pageSize = 200,
): AsyncGenerator<StoredEpisode> {
  let after: EpisodeRow | undefined;
  for (;;) {
    const rows = await pagePublishedBetween(db, from, to, after, pageSize);
    for (const row of rows) yield storedEpisode(row);
    if (rows.length < pageSize) return;
    after = rows.at(-1);
  }
}

export async function findEpisode(db: Queryable, id: string): Promise<StoredEpisode | null> {
  const { rows } = await db.query<Omit<EpisodeRow, 'id' | 'published_position'>>(
    `select event_id, payload, ${SHOW_LANGUAGE} from episodes where id = $1::text`,
    [id],
  );
  return rows[0] ? storedEpisode(rows[0]) : null;
}
