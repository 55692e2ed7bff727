import type { FastifyInstance } from 'fastify';

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
