import type { Queryable } from '../../src/db/db.ts';
import type { StoredLine } from './projection.ts';

export interface TranscriptRow {
  episode_id: string;
  language: string | null;
  lines: StoredLine[];
}

export async function findTranscript(db: Queryable, episodeId: string): Promise<TranscriptRow | null> {
  const { rows } = await db.query<TranscriptRow>(
    'select episode_id, language, lines from transcripts where episode_id = $1::text',
    [episodeId],
  );
  return rows[0] ?? null;
}

export async function transcriptsByIds(
  db: Queryable,
  episodeIds: readonly string[],
): Promise<TranscriptRow[]> {
  const { rows } = await db.query<TranscriptRow>(
    'select episode_id, language, lines from transcripts where episode_id = any($1::text[])',
    [episodeIds],
  );
  return rows;
}

/**
 * Only the wanted lines (0-based positions in number order) of each episode, as a sparse array of
 * the transcript's full length: one pass over each transcript in the database, none of the other
 * lines sent or parsed.
 */
export async function transcriptLinesAt(
  db: Queryable,
  wanted: ReadonlyMap<string, readonly number[]>,
): Promise<Map<string, StoredLine[]>> {
  if (wanted.size === 0) return new Map();
  const ids = [...wanted.keys()];
  const { rows } = await db.query<{
    episode_id: string;
    count: number;
    lines: { i: number; line: StoredLine }[] | null;
  }>(
    `select t.episode_id, jsonb_array_length(t.lines) as count,
            (select jsonb_agg(jsonb_build_object('i', l.i - 1, 'line', l.value))
               from jsonb_array_elements(t.lines) with ordinality as l(value, i)
              where l.i - 1 = any(w.idx::int[])) as lines
       from unnest($1::text[], $2::text[]) as w(episode_id, idx)
       join transcripts t on t.episode_id = w.episode_id`,
    [ids, ids.map((id) => `{${wanted.get(id)!.join(',')}}`)],
  );
  return new Map(
    rows.map((row) => {
      const lines = new Array<StoredLine>(row.count);
      for (const { i, line } of row.lines ?? []) lines[i] = line;
      return [row.episode_id, lines];
    }),
  );
}
