import { createHash } from 'node:crypto';
import { BadRequestError, ValidationError } from '../errors.ts';
import type { CursorCodec } from '../http/cursor.ts';

/** The largest value of a PostgreSQL integer column: a query bound past it is refused with 400. */
export const INT4_MAX = 2_147_483_647;

/** A validated ISO 8601 date (midnight UTC) or date-time as an instant. */
export const instantOf = (value: string | undefined) =>
  value === undefined
    ? undefined
    : new Date(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);

/** 422 when a lower bound exceeds its upper bound, naming both parameters. */
export function assertRange(
  min: number | Date | undefined,
  max: number | Date | undefined,
  minName: string,
  maxName: string,
) {
  if (min === undefined || max === undefined || min <= max) return;
  throw new ValidationError('invalid_range', `${minName} must not be greater than ${maxName}.`, [
    {
      location: `query.${minName}`,
      message: `is greater than ${maxName}`,
      value: min instanceof Date ? min.toISOString() : min,
    },
  ]);
}

/** A comma-separated list parameter as its values, trimmed, without empties. */
export const listOf = (value: string | undefined) =>
  value === undefined
    ? undefined
    : value
        .split(',')
        .map((v) => v.trim())
        .filter(Boolean);

/**
 * Offset cursors for ranked lists whose order is not a keyset (search relevance): the cursor carries
 * the offset and a fingerprint of the query, so it cannot be replayed against another query.
 */
export function offsetCursor(cursors: CursorCodec, query: Record<string, unknown>) {
  const { cursor: _cursor, limit: _limit, ...rest } = query;
  const sorted = Object.fromEntries(Object.entries(rest).sort(([a], [b]) => a.localeCompare(b)));
  const h = createHash('sha256').update(JSON.stringify(sorted)).digest('base64url').slice(0, 16);
  return {
    offset(cursor: string | undefined): number {
      if (cursor === undefined) return 0;
      const position = cursors.decode<{ h: string; o: number }>(cursor);
      if (position.h !== h || !Number.isInteger(position.o) || position.o < 0)
        throw new BadRequestError('invalid_cursor', 'The cursor belongs to another query.', [
          { location: 'query.cursor', message: 'issued for different parameters', value: cursor },
        ]);
      return position.o;
    },
    next: (offset: number) => cursors.encode({ h, o: offset }),
  };
}
