import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import type { Db, HeldLock, Queryable } from './db.ts';
import { INT8_OID, parseInt8 } from './db.ts';

interface PGliteLike {
  query<R>(text: string, params?: unknown[]): Promise<{ rows: R[]; affectedRows?: number }>;
  exec(script: string): Promise<unknown>;
}

function wrap(target: PGliteLike): Queryable {
  return {
    kind: 'pglite',
    async query<R>(text: string, params?: readonly unknown[]) {
      const result = await target.query<R>(text, params as unknown[] | undefined);
      // PGlite reports affectedRows 0 for a SELECT: count the rows it returned instead.
      return { rows: result.rows, rowCount: result.rows.length || (result.affectedRows ?? 0) };
    },
    async exec(script: string) {
      await target.exec(script);
    },
  };
}

/** Embedded PostgreSQL in dataDir, or in memory when dataDir is undefined. */
export async function openPglite(dataDir?: string): Promise<Db> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const pglite = await PGlite.create({
    ...(dataDir ? { dataDir } : {}),
    extensions: { pg_trgm },
    parsers: { [INT8_OID]: parseInt8 },
  });
  const top = wrap(pglite);
  const held = new Set<string>();

  return {
    kind: 'pglite',
    query: top.query,
    exec: top.exec,
    transaction(fn) {
      return pglite.transaction((tx) => fn(wrap(tx)));
    },
    async tryLock(name) {
      if (held.has(name)) return null;
      held.add(name);
      const lock: HeldLock = {
        async release() {
          held.delete(name);
        },
      };
      return lock;
    },
    async listen(channel, onNotify) {
      const unsubscribe = await pglite.listen(channel, onNotify);
      return unsubscribe;
    },
    async close() {
      await pglite.close();
    },
  };
}
