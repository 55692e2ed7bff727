import { exactInstant, Params } from '../../src/catalog/sql.ts';
import type { Queryable } from '../../src/db/db.ts';

export interface SegmentRow {
  id: string;
  episode_id: string;
  podcast_id: string;
  published_at: Date;
  number: number;
  title: string;
  type: string | null;
  description: string | null;
  summary: string | null;
  audio_url: string | null;
  read_type: string | null;
  start_line: number | null;
  end_line: number | null;
  start_seconds: number;
  end_seconds: number;
}

export interface SegmentFilters {
  episodeId?: string;
  podcastId?: string;
  type?: string;
  publishedAfter?: Date;
  publishedBefore?: Date;
}

/** A listed segment with its episode's published_at to the microsecond, the keyset position's `p`. */
export interface ListedSegment extends SegmentRow {
  published_position: string;
}

/** Keyset position: newest episode first, then by episode id descending, then segment number ascending. */
export interface SegmentPosition {
  p: string;
  e: string;
  n: number;
  i: string;
}

const COLUMNS = `id, episode_id, podcast_id, published_at, number, title, type, description, summary,
  audio_url, read_type, start_line, end_line, start_seconds, end_seconds`;

export async function listSegments(
  db: Queryable,
  f: SegmentFilters,
  limit: number,
  after?: SegmentPosition,
): Promise<ListedSegment[]> {
  const params = new Params();
  const where: string[] = [];
  if (f.episodeId !== undefined) where.push(`episode_id = ${params.p(f.episodeId, 'text')}`);
  if (f.podcastId !== undefined) where.push(`podcast_id = ${params.p(f.podcastId, 'text')}`);
  if (f.type !== undefined) where.push(`type = ${params.p(f.type, 'text')}`);
  if (f.publishedAfter) where.push(`published_at >= ${params.p(f.publishedAfter, 'timestamptz')}`);
  if (f.publishedBefore) where.push(`published_at < ${params.p(f.publishedBefore, 'timestamptz')}`);
  if (after) {
    const p = params.p(after.p, 'timestamptz');
    const e = params.p(after.e, 'text');
    // published_at <= p holds for every row after the position; alone of these conditions it bounds
    // an index scan, so a page starts at its cursor, not at the list's first row (docs/catalog.md,
    // "What a page reads").
    where.push(`published_at <= ${p}`);
    where.push(`((published_at, episode_id) < (${p}, ${e})
                 or ((published_at, episode_id) = (${p}, ${e})
                     and (number, id) > (${params.p(after.n, 'int')}, ${params.p(after.i, 'text')})))`);
  }
  const { rows } = await db.query<ListedSegment>(
    `select ${COLUMNS}, ${exactInstant('published_at')} as published_position
       from segments ${where.length ? `where ${where.join(' and ')}` : ''}
      order by published_at desc, episode_id desc, number, id limit ${params.p(limit, 'int')}`,
    params.values,
  );
  return rows;
}

export async function findSegment(db: Queryable, id: string): Promise<SegmentRow | null> {
  const { rows } = await db.query<SegmentRow>(`select ${COLUMNS} from segments where id = $1::text`, [id]);
  return rows[0] ?? null;
}

/**
 * The segment each clip names, by clip id, when it is one of the clip's own episode's: a segment
 * id another episode has taken since names no segment of this clip's.
 */
export async function segmentsOfClips(
  db: Queryable,
  clips: readonly { id: string; episode_id: string; segment_id: string | null }[],
): Promise<Map<string, SegmentRow>> {
  const named = clips.flatMap((c) => (c.segment_id ? [{ ...c, segment_id: c.segment_id }] : []));
  if (named.length === 0) return new Map();
  const { rows } = await db.query<SegmentRow>(`select ${COLUMNS} from segments where id = any($1::text[])`, [
    [...new Set(named.map((c) => c.segment_id))],
  ]);
  const byId = new Map(rows.map((s) => [s.id, s]));
  const ofClip = new Map<string, SegmentRow>();
  for (const c of named) {
    const segment = byId.get(c.segment_id);
    if (segment?.episode_id === c.episode_id) ofClip.set(c.id, segment);
  }
  return ofClip;
}
