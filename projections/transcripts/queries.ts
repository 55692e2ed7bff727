import type { Queryable } from '../../src/db/db.ts';
import { CHUNK_LINES, type StoredLine } from './projection.ts';

export interface TranscriptRow {
  episode_id: string;
  language: string | null;
  lines: StoredLine[];
}

/**
 * SQL: each transcript of `where` (on transcripts t) with its chunks joined into one JSON array of
 * arrays, as text: the lines are parsed once, by the caller.
 */
const wholeTranscripts = (where: string) =>
  `select t.episode_id, t.language,
          (select '[' || string_agg(c.lines, ',' order by c.chunk) || ']'
             from transcript_chunks c where c.episode_id = t.episode_id) as chunks
     from transcripts t where ${where}`;

const whole = ({
  episode_id,
  language,
  chunks,
}: {
  episode_id: string;
  language: string | null;
  chunks: string;
}) => ({
  episode_id,
  language,
  lines: (JSON.parse(chunks) as StoredLine[][]).flat(),
});

export async function findTranscript(db: Queryable, episodeId: string): Promise<TranscriptRow | null> {
  const { rows } = await db.query<{ episode_id: string; language: string | null; chunks: string }>(
    wholeTranscripts('t.episode_id = $1::text'),
    [episodeId],
  );
  return rows[0] ? whole(rows[0]) : null;
}

/**
 * The version of an episode the transcripts model holds; null when it holds none. Its occurred_at
 * alone would not do: a re-sent episode with the same occurred_at replaces the transcript, and so
 * does a rebuild by other code; either writes the version row again, in the transaction that
 * writes the lines, so the row's writing transaction (xmin) tells them apart.
 */
export async function transcriptVersion(db: Queryable, episodeId: string): Promise<string | null> {
  const { rows } = await db.query<{ v: string | null }>(`select ${transcriptVersionOf('$1::text')} as v`, [
    episodeId,
  ]);
  return rows[0]?.v ?? null;
}

/** SQL: the transcript version (above) of the episode `episodeId` names, to read it with the episode. */
export const transcriptVersionOf = (episodeId: string) =>
  `(select occurred_at::text || '@' || xmin::text from episode_versions
     where projection = 'transcripts' and episode_id = ${episodeId})`;

export async function transcriptsByIds(
  db: Queryable,
  episodeIds: readonly string[],
): Promise<TranscriptRow[]> {
  const { rows } = await db.query<{ episode_id: string; language: string | null; chunks: string }>(
    wholeTranscripts('t.episode_id = any($1::text[])'),
    [episodeIds],
  );
  return rows.map(whole);
}

/** Wanted line positions (per episode) as two parallel arrays, each position once: wantedChunks' parameters. */
export function wantedPositions(wanted: ReadonlyMap<string, readonly number[]>): [string[], number[]] {
  const ids: string[] = [];
  const positions: number[] = [];
  for (const [id, list] of wanted)
    for (const position of new Set(list)) {
      ids.push(id);
      positions.push(position);
    }
  return [ids, positions];
}

/**
 * SQL: the chunks (episode_id, chunk) holding the positions of the parallel arrays `ids` and
 * `positions` (wantedPositions), each with its wanted lines' 1-based numbers in the chunk (`wanted`).
 */
export const wantedChunks = (ids: string, positions: string) =>
  `select episode_id, position / ${CHUNK_LINES} as chunk, array_agg(position % ${CHUNK_LINES} + 1) as wanted
     from unnest(${ids}::text[], ${positions}::int[]) as u(episode_id, position) group by 1, 2`;

/**
 * Only the wanted lines (positions) of each episode, as a sparse array that ends at the last line
 * read: only the chunks that hold them are read and parsed.
 */
export async function linesAt(
  db: Queryable,
  wanted: ReadonlyMap<string, readonly number[]>,
): Promise<Map<string, StoredLine[]>> {
  const [ids, positions] = wantedPositions(wanted);
  const found = new Map<string, StoredLine[]>([...wanted.keys()].map((id) => [id, []]));
  if (ids.length === 0) return found;
  const { rows } = await db.query<{ episode_id: string; position: number; line: StoredLine }>(
    `select c.episode_id, c.chunk * ${CHUNK_LINES} + l.n::int - 1 as position, l.line
       from (${wantedChunks('$1', '$2')}) w
       join transcript_chunks c on c.episode_id = w.episode_id and c.chunk = w.chunk
       cross join lateral json_array_elements(c.lines::json) with ordinality as l(line, n)
      where l.n = any(w.wanted)`,
    [ids, positions],
  );
  for (const row of rows) found.get(row.episode_id)![row.position] = row.line;
  return found;
}
