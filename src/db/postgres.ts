import pg from 'pg';
import type { Db, HeldLock, Queryable, QueryOptions, QueryResult } from './db.ts';
import { INT8_OID, parseInt8 } from './db.ts';

const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID) return parseInt8;
    // biome-ignore lint/suspicious/noExplicitAny: pg's overloads do not accept a union format
    return pg.types.getTypeParser(oid, format as any);
  },
};

export interface PostgresOptions {
  connectionString: string;
  /** Schema to put first on search_path (one schema per test file). */
  schema?: string;
  max?: number;
}

function wrap(client: pg.ClientBase | pg.Pool): Queryable {
  return {
    kind: 'postgres',
    async query<R>(
      text: string,
      params?: readonly unknown[],
      options?: QueryOptions,
    ): Promise<QueryResult<R>> {
      const values = params as unknown[] | undefined;
      const result = options?.name
        ? await client.query({ name: options.name, text, values })
        : await client.query(text, values);
      return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
    },
    async exec(script: string) {
      await client.query(script);
    },
  };
}

/**
 * Session settings sent when a connection starts: JIT off (it compiled plans of the large search
 * and catalog reads for 50–90 ms each, more than it saved: docs/operations.md, "PostgreSQL
 * settings") and the schema first on search_path. A URL's own `options` parameter is kept: pg lets
 * it replace the config's, so it is moved into the config here.
 */
function startupOptions(connectionString: string, schema: string | undefined) {
  const settings = ['-c jit=off'];
  if (schema) settings.push(`-c search_path=${schema},public`);
  let url: URL | undefined;
  try {
    url = new URL(connectionString);
  } catch {
    // Not a URL (a key=value string): its settings are left as they are.
  }
  const given = url?.searchParams.get('options');
  if (url && given) {
    url.searchParams.delete('options');
    settings.unshift(given);
  }
  return { connectionString: url && given ? url.href : connectionString, options: settings.join(' ') };
}

export function openPostgres(options: PostgresOptions): Db {
  const config: pg.PoolConfig = {
    ...startupOptions(options.connectionString, options.schema),
    max: options.max ?? 10,
    types,
    application_name: 'earshot',
  };
  const pool = new pg.Pool(config);
  // An idle client that loses its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  const pooled = wrap(pool);

  const clientConfig: pg.ClientConfig = { ...config };
  const newClient = () => new pg.Client(clientConfig);

  return {
    kind: 'postgres',
    query: pooled.query,
    exec: pooled.exec,
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('begin');
        const result = await fn(wrap(client));
        await client.query('commit');
        return result;
      } catch (error) {
        await client.query('rollback').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    async tryLock(name) {
      const client = newClient();
      client.on('error', () => {});
      await client.connect();
      const { rows } = await client.query<{ locked: boolean }>(
        // Scoped by schema: earshot installations (and test files) in different schemas of one
        // database must not block each other.
        "select pg_try_advisory_lock(hashtextextended(current_schema() || ':' || $1::text, 0)) as locked",
        [name],
      );
      if (!rows[0]?.locked) {
        await client.end();
        return null;
      }
      const lock: HeldLock = {
        async release() {
          await client.end().catch(() => {});
        },
      };
      return lock;
    },
    async listen(channel, onNotify) {
      const client = newClient();
      client.on('error', () => {});
      await client.connect();
      client.on('notification', (message) => {
        if (message.channel === channel) onNotify(message.payload ?? '');
      });
      await client.query(`listen ${pg.escapeIdentifier(channel)}`);
      return async () => {
        await client.end().catch(() => {});
      };
    },
    async close() {
      await pool.end();
    },
  };
}
