import type { Queryable } from '../../src/db/db.ts';

/**
 * Runs `run` with a Queryable that runs each statement under EXPLAIN ANALYZE first: the rows its
 * scans of `table` read (returned or removed by a filter; EXPLAIN's rows are per loop, rounded),
 * the rows each scan returned, the kinds of those scans and their index conditions, and what `run`
 * answered.
 */
export async function rowsRead<T>(db: Queryable, table: string, run: (db: Queryable) => Promise<T>) {
  let read = 0;
  const returned: number[] = [];
  const scans: string[] = [];
  const conditions: string[] = [];
  const explaining: Queryable = {
    async query(text: string, params?: readonly unknown[]) {
      const { rows } = await db.query<{ 'QUERY PLAN': unknown }>(
        `explain (analyze, format json) ${text}`,
        params,
      );
      const visit = (node: Record<string, unknown>) => {
        if (node['Relation Name'] === table) {
          scans.push(node['Node Type'] as string);
          conditions.push(String(node['Index Cond'] ?? node['Recheck Cond'] ?? ''));
          const loops = node['Actual Loops'] as number;
          returned.push((node['Actual Rows'] as number) * loops);
          read +=
            ((node['Actual Rows'] as number) + ((node['Rows Removed by Filter'] as number) ?? 0)) * loops;
        }
        for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) visit(child);
      };
      const plan = rows[0]!['QUERY PLAN'];
      visit((typeof plan === 'string' ? JSON.parse(plan) : plan)[0].Plan);
      return db.query(text, params);
    },
  } as Queryable;
  const answer = await run(explaining);
  return { read, returned, scans, conditions, answer };
}
