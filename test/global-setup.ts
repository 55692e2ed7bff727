import { openPostgres } from '../src/db/postgres.ts';
import { TEST_DATABASE_URL } from './support/db.ts';

/** Extensions are per database: install them once, before test files migrate their own schemas. */
export default async function setup() {
  const db = openPostgres({ connectionString: TEST_DATABASE_URL, max: 1 });
  try {
    await db.query("select pg_advisory_lock(hashtextextended('earshot:migrate', 0))");
    await db.query('create extension if not exists pg_trgm with schema public');
  } finally {
    await db.close();
  }
}
