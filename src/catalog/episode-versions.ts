import type { Queryable } from '../db/db.ts';
import type { RecordedEvent } from '../eventstore/port.ts';
import type { EpisodeTranscribed } from '../ingestion/events.ts';

/** The newest version (occurred_at, the later event on a tie) of each episode of a batch, by episode id. */
export function newestVersions(events: readonly RecordedEvent[]): Map<string, EpisodeTranscribed> {
  const latest = new Map<string, EpisodeTranscribed>();
  for (const event of events) {
    const data = event.data as EpisodeTranscribed;
    const seen = latest.get(data.episode.id);
    if (!seen || Date.parse(seen.occurred_at) <= Date.parse(data.occurred_at))
      latest.set(data.episode.id, data);
  }
  return latest;
}

/**
 * The episodes of a batch that a catalog projection must (re)write: the newest version of each
 * episode in the batch, kept only when it is not older than the version the projection already
 * holds. Records the new versions in episode_versions, in the caller's transaction.
 */
export async function advanceEpisodeVersions(
  tx: Queryable,
  projection: string,
  events: readonly RecordedEvent[],
): Promise<EpisodeTranscribed[]> {
  const latest = newestVersions(events);
  if (latest.size === 0) return [];
  const ids = [...latest.keys()];
  const { rows } = await tx.query<{ episode_id: string }>(
    `insert into episode_versions (projection, episode_id, occurred_at)
     select $1::text, e.id, e.at from unnest($2::text[], $3::timestamptz[]) as e(id, at)
     on conflict (projection, episode_id) do update set occurred_at = excluded.occurred_at
      where episode_versions.occurred_at <= excluded.occurred_at
     returning episode_id`,
    [projection, ids, ids.map((id) => latest.get(id)!.occurred_at)],
  );
  return rows.map((row) => latest.get(row.episode_id)!);
}

export async function resetEpisodeVersions(tx: Queryable, projection: string) {
  await tx.query('delete from episode_versions where projection = $1::text', [projection]);
}

/** Rows of a batch by id, the last one winning (an id a producer repeated across episodes). */
export const lastById = <T extends { id: string }>(rows: T[]) => [
  ...new Map(rows.map((r) => [r.id, r])).values(),
];
