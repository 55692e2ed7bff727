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

/**
 * The version of an episode the transcripts model holds; null when it holds none. Its occurred_at
 * alone would not do: a re-sent episode with the same occurred_at replaces the transcript, and so
 * does a rebuild by other code; either writes the version row again, in the transaction that
 * writes the lines, so the row's writing transaction (xmin) tells them apart.
 */
export async function transcriptVersion(db: Queryable, episodeId: string): Promise<string | null> {
  const { rows } = await db.query<{ v: string }>(
    `select occurred_at::text || '@' || xmin::text as v
       from episode_versions where projection = 'transcripts' and episode_id = $1::text`,
    [episodeId],
  );
  return rows[0]?.v ?? null;
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
