/** The one database interface the rest of earshot uses, served by `pg` or by embedded PGlite. */
export interface QueryResult<R> {
  rows: R[];
  rowCount: number;
}

/** How a statement is sent. */
export interface QueryOptions {
  /**
   * The statement is kept prepared under this name on each PostgreSQL connection: parsed once per
   * connection, and planned once if PostgreSQL finds a generic plan no costlier than the plans it
   * makes for the given values. One name, one text. PGlite ignores it.
   */
  name?: string;
}

export interface Queryable {
  /** The engine behind it, where a statement's parameters are sent differently (a Buffer in binary form on PostgreSQL). */
  readonly kind?: 'postgres' | 'pglite';
  query<R = Record<string, unknown>>(
    text: string,
    params?: readonly unknown[],
    options?: QueryOptions,
  ): Promise<QueryResult<R>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
}

export interface HeldLock {
  release(): Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /**
   * Runs fn in one transaction. On PGlite every other query waits for it, so fn must use
   * `tx` only, never the Db itself.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Takes a named lock held until released or until this process dies: a session-level
   * advisory lock on its own connection (PostgreSQL), an in-process lock (PGlite, one process).
   * Null when another holder has it.
   */
  tryLock(name: string): Promise<HeldLock | null>;
  /** Calls onNotify for each NOTIFY on channel, from any process. */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** Parses int8 and int8[] as numbers: positions and counts stay far below 2^53. */
export const INT8_OID = 20;
export const parseInt8 = (value: string): number => Number(value);
