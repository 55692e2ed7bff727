import { BadRequestError } from '../errors.ts';
import type { CursorCodec } from './cursor.ts';

/** Query properties every list route accepts (spec: limit 1–100, default 25; opaque cursor). */
export const pageQuery = {
  limit: { type: 'integer', minimum: 1, maximum: 100, default: 25 },
  cursor: { type: 'string', minLength: 1, maxLength: 2048 },
} as const;

/** The page envelope schema around an item schema. */
export function pageOf(item: object) {
  return {
    type: 'object',
    required: ['data', 'has_more'],
    properties: {
      data: { type: 'array', items: item },
      has_more: { type: 'boolean' },
      cursor: { type: 'string' },
    },
  } as const;
}

export interface Page<T> {
  data: T[];
  has_more: boolean;
  cursor?: string;
}

/**
 * Builds a page from rows fetched with `limit + 1`: the extra row only says that more exist.
 * `positionOf` gives the keyset position of the last row shown.
 */
export function toPage<Row, Item>(
  rows: Row[],
  limit: number,
  cursors: CursorCodec,
  positionOf: (row: Row) => unknown,
  toItem: (row: Row) => Item,
): Page<Item> {
  const hasMore = rows.length > limit;
  const shown = hasMore ? rows.slice(0, limit) : rows;
  const page: Page<Item> = { data: shown.map(toItem), has_more: hasMore };
  const last = shown.at(-1);
  if (hasMore && last !== undefined) page.cursor = cursors.encode(positionOf(last));
  return page;
}

/** Keyset position of a list ordered by creation, bound to the list (`p`) it was issued for. */
interface ListPosition {
  p: string;
  c: string;
  i: string;
}

/**
 * One page of a list ordered by (created_at, id): decodes the cursor (one of another list is 400
 * `invalid_cursor`), fetches `limit + 1` rows after it, and issues the next cursor for `list`.
 */
export async function pageByCreation<Row extends { created_at: string; id: string }>(
  cursors: CursorCodec,
  list: string,
  query: { limit: number; cursor?: string | undefined },
  fetch: (options: { limit: number; after?: { createdAt: string; id: string } }) => Promise<Row[]>,
): Promise<Page<Row>> {
  let after: { createdAt: string; id: string } | undefined;
  if (query.cursor) {
    const position = cursors.decode<ListPosition>(query.cursor);
    if (position.p !== list) {
      throw new BadRequestError('invalid_cursor', 'The cursor belongs to another list.', [
        { location: 'query.cursor', message: 'issued for another list', value: query.cursor },
      ]);
    }
    after = { createdAt: position.c, id: position.i };
  }
  const rows = await fetch({ limit: query.limit + 1, ...(after && { after }) });
  return toPage<Row, Row>(
    rows,
    query.limit,
    cursors,
    (row): ListPosition => ({ p: list, c: row.created_at, i: row.id }),
    (row) => row,
  );
}
