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

/**
 * SQL: a clip's speaker's entity, person and speaker ids, as the index clips_speaker_ids holds them
 * (migration 0264): a speaker filter reads that speaker's clips, not every clip (docs/catalog.md,
 * "What a page reads").
 */
const SPEAKER_IDS = `array[speaker->>'entity_id', speaker->>'person_id', speaker->>'id']`;

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
  if (f.speakerIds !== undefined) where.push(`${SPEAKER_IDS} && ${params.p(f.speakerIds, 'text[]')}`);
  if (f.type !== undefined) where.push(`type = ${params.p(f.type, 'text')}`);
  if (f.minEngagement !== undefined) where.push(`engagement_score >= ${params.p(f.minEngagement, 'int')}`);
  const n = params.p(limit, 'int');
  const page = (conditions: string[]) =>
    `select ${COLUMNS} from clips ${conditions.length ? `where ${conditions.join(' and ')}` : ''}
      order by engagement_score desc, id limit ${n}`;
  let text = page(where);
  if (after) {
    // The clips after the position are those of its score after its id, then those of lower
    // scores: two ranges an index (score desc, id) starts at, where one condition with `or` was
    // read from the list's first clip on (docs/catalog.md, "What a page reads").
    const s = params.p(after.s, 'int');
    const rest = [`engagement_score = ${s} and id > ${params.p(after.i, 'text')}`, `engagement_score < ${s}`];
    text = `select * from (${rest.map((c) => `(${page([...where, c])})`).join(' union all ')}) c
      order by engagement_score desc, id limit ${n}`;
  }
  const { rows } = await db.query<ClipRow>(text, params.values);
  return rows;
}

export async function findClip(db: Queryable, id: string): Promise<ClipRow | null> {
  const { rows } = await db.query<ClipRow>(`select ${COLUMNS} from clips where id = $1::text`, [id]);
  return rows[0] ?? null;
}
