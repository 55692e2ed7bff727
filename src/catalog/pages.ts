import type { FastifyInstance } from 'fastify';
import type { ClipPosition } from '../../projections/clips/queries.ts';
import { utcInstant } from '../date-time.ts';

/** The keyset position of an episode page (and a mention page): its last episode's published_at and id. */
export interface EpisodePosition {
  p: string;
  i: string;
}

/** The keyset position of a segment page: its last segment's episode published_at, episode, number and id. */
export interface SegmentPosition {
  p: string;
  e: string;
  n: number;
  i: string;
}

/** `position` holds exactly `keys`, its `p` an instant: one of the positions these pages issue. */
function positionWith(position: unknown, keys: string[]): position is Record<string, unknown> {
  if (typeof position !== 'object' || position === null || Array.isArray(position)) return false;
  const own = Object.keys(position);
  const { p } = position as { p?: unknown };
  return (
    own.length === keys.length &&
    keys.every((key) => own.includes(key)) &&
    typeof p === 'string' &&
    utcInstant(p) !== undefined
  );
}

export const isEpisodePosition = (position: unknown): position is EpisodePosition =>
  positionWith(position, ['p', 'i']) && typeof position.i === 'string';

export const isClipPosition = (position: unknown): position is ClipPosition => {
  if (typeof position !== 'object' || position === null || Array.isArray(position)) return false;
  const { s, i } = position as { s?: unknown; i?: unknown };
  return Object.keys(position).length === 2 && Number.isSafeInteger(s) && typeof i === 'string';
};

export const isSegmentPosition = (position: unknown): position is SegmentPosition =>
  positionWith(position, ['p', 'e', 'n', 'i']) &&
  typeof position.e === 'string' &&
  Number.isSafeInteger(position.n) &&
  typeof position.i === 'string';

/**
 * Keyset pages of the catalog's lists: rows fetched with limit + 1, the cursor the last row's position,
 * its published_at as the exact text the query returned (a Date would drop the microseconds).
 */
export function episodePage<Row extends { published_position: string; id: string }, Item>(
  cursors: FastifyInstance['cursors'],
  rows: Row[],
  limit: number,
  toItem: (row: Row) => Item,
) {
  const hasMore = rows.length > limit;
  const shown = hasMore ? rows.slice(0, limit) : rows;
  const last = shown.at(-1);
  const data = shown.map(toItem);
  return hasMore && last
    ? {
        data,
        has_more: true,
        cursor: cursors.encode({ p: last.published_position, i: last.id }),
      }
    : { data, has_more: false };
}

export function segmentPage<
  Row extends { published_position: string; episode_id: string; number: number; id: string },
  Item,
>(cursors: FastifyInstance['cursors'], rows: Row[], limit: number, toItem: (row: Row) => Item) {
  const hasMore = rows.length > limit;
  const shown = hasMore ? rows.slice(0, limit) : rows;
  const last = shown.at(-1);
  const data = shown.map(toItem);
  return hasMore && last
    ? {
        data,
        has_more: true,
        cursor: cursors.encode({
          p: last.published_position,
          e: last.episode_id,
          n: last.number,
          i: last.id,
        }),
      }
    : { data, has_more: false };
}
