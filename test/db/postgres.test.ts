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
