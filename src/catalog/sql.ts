/** Collects the parameters of a statement built from optional parts: `p(value, 'text')` → `$3::text`. */
export class Params {
  readonly values: unknown[] = [];
  p(value: unknown, cast: string): string {
    this.values.push(value);
    return `$${this.values.length}::${cast}`;
  }
}

/** A LIKE pattern matching `text` literally. */
export const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * A timestamptz column as the exact text of a keyset cursor: to the microsecond PostgreSQL keeps,
 * where a JS Date would keep milliseconds and the next page would skip rows within the millisecond.
 */
export const exactInstant = (column: string) =>
  `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
