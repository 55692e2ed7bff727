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
