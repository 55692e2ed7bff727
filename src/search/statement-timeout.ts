import type { Db, Queryable } from '../db/db.ts';
import { UnavailableError } from '../errors.ts';

/** EARSHOT_SEARCH_STATEMENT_TIMEOUT_MS's default: far above the search routes' p99 (docs/search.md, "Statement timeout"). */
export const SEARCH_STATEMENT_TIMEOUT_MS = 10_000;

// SQLSTATE query_canceled: what PostgreSQL raises when statement_timeout fires.
const QUERY_CANCELED = '57014';

/**
 * The search routes' reads with a per-statement limit (docs/search.md, "Statement timeout"): each
 * statement runs in its own transaction with `SET LOCAL statement_timeout`, so no request holds a
 * PostgreSQL connection longer than `ms`; one that would answers 503 query_timeout. 0 turns it off;
 * so does embedded PGlite (one process, one connection: nothing else to protect, no timer).
 */
export function boundedReads(db: Db, ms: number): Queryable {
  if (ms <= 0 || db.kind !== 'postgres') return db;
  return {
    kind: db.kind,
    exec: (script) => db.exec(script),
    async query(text, params) {
      try {
        return await db.transaction(async (tx) => {
          await tx.query("select set_config('statement_timeout', $1, true)", [`${ms}ms`]);
          return tx.query(text, params);
        });
      } catch (error) {
        if ((error as { code?: unknown }).code !== QUERY_CANCELED) throw error;
        throw new UnavailableError(
          'query_timeout',
          `The search took longer than ${ms} ms and was stopped.`,
          {
            message:
              'Narrow the search: rarer or fewer words, a podcast_id, episode_id or since/until, or keyword_match=ranked.',
          },
          { cause: error },
        );
      }
    },
  };
}
