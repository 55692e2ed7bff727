import { afterAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db/postgres.ts';
import { TEST_DATABASE_URL } from '../support/db.ts';

describe('openPostgres', () => {
  const db = openPostgres({ connectionString: TEST_DATABASE_URL, max: 2 });
  afterAll(() => db.close());

  it('turns JIT compilation off on pooled connections and in transactions (docs/operations.md)', async () => {
    const { rows } = await db.query<{ jit: string }>('show jit');
    expect(rows[0]?.jit).toBe('off');
    const inTransaction = await db.transaction((tx) => tx.query<{ jit: string }>('show jit'));
    expect(inTransaction.rows[0]?.jit).toBe('off');
  });
});

describe('openPostgres with options in the URL', () => {
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('options', '-c statement_timeout=12345');
  const db = openPostgres({ connectionString: url.href, schema: 'pg_catalog', max: 1 });
  afterAll(() => db.close());

  it("keeps the URL's own settings beside JIT off and the schema", async () => {
    const { rows } = await db.query<{ jit: string; timeout: string; path: string }>(
      "select current_setting('jit') as jit, current_setting('statement_timeout') as timeout, current_setting('search_path') as path",
    );
    expect(rows[0]).toEqual({ jit: 'off', timeout: '12345ms', path: 'pg_catalog,public' });
  });
});
