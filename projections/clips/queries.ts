import { Params } from '../../src/catalog/sql.ts';
import type { Queryable } from '../../src/db/db.ts';

export interface ClipSpeaker {
  id?: string;
  name?: string;
  role?: string;
  entity_id?: string;
  person_id?: string;
}

export interface ClipRow {
  id: string;
  episode_id: string;
  podcast_id: string;
  published_at: Date;
  title: string;
  type: string | null;
  start_seconds: number;
  end_seconds: number;
  engagement_score: number;
  description: string | null;
  intro_statement: string | null;
  audio_url: string | null;
  segment_id: string | null;
  speaker: ClipSpeaker | null;
}

export interface ClipFilters {
  episodeId?: string;
  podcastId?: string;
  /** Clips whose speaker is any of these entity, person or speaker ids. */
  speakerIds?: string[];
  type?: string;
  minEngagement?: number;
}

/** Keyset position: highest engagement first, then id ascending. */
export interface ClipPosition {
  s: number;
  i: string;
}

const COLUMNS = `id, episode_id, podcast_id, published_at, title, type, start_seconds, end_seconds,
  engagement_score, description, intro_statement, audio_url, segment_id, speaker`;

export async function listClips(
  db: Queryable,
  f: ClipFilters,
  limit: number,
  after?: ClipPosition,
): Promise<ClipRow[]> {
  const params = new Params();
  const where: string[] = [];
  if (f.episodeId !== undefined) where.push(`episode_id = ${params.p(f.episodeId, 'text')}`);
  if (f.podcastId !== undefined) where.push(`podcast_id = ${params.p(f.podcastId, 'text')}`);
  if (f.speakerIds !== undefined) {
    const ids = params.p(f.speakerIds, 'text[]');
    where.push(`(speaker->>'entity_id' = any(${ids}) or speaker->>'person_id' = any(${ids})
                 or speaker->>'id' = any(${ids}))`);
  }
  if (f.type !== undefined) where.push(`type = ${params.p(f.type, 'text')}`);
  if (f.minEngagement !== undefined) where.push(`engagement_score >= ${params.p(f.minEngagement, 'int')}`);
  if (after) {
    const s = params.p(after.s, 'int');
    where.push(
      `(engagement_score < ${s} or (engagement_score = ${s} and id > ${params.p(after.i, 'text')}))`,
    );
  }
  const { rows } = await db.query<ClipRow>(
    `select ${COLUMNS} from clips ${where.length ? `where ${where.join(' and ')}` : ''}
      order by engagement_score desc, id limit ${params.p(limit, 'int')}`,
    params.values,
  );
  return rows;
}

export async function findClip(db: Queryable, id: string): Promise<ClipRow | null> {
  const { rows } = await db.query<ClipRow>(`select ${COLUMNS} from clips where id = $1::text`, [id]);
  return rows[0] ?? null;
}
