import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sponsorInfo } from '../../projections/ad-leaderboard/queries.ts';
import type { Db } from '../../src/db/db.ts';
import { createTestDb } from '../support/db.ts';

// A sponsor's name and company are those of its latest ad (naming one, for the company): the
// leaderboard's pages, a show's sponsors and the sponsor recommendations read them for every
// sponsor shown. They are found reading a few rows, however many ads the sponsor has and whether
// any of them names a company (docs/advertising.md, "Read models and worker").

let db: Db;
let drop: () => Promise<void>;
beforeAll(async () => {
  ({ db, drop } = await createTestDb());
  await db.query(
    `insert into ads (id, episode_id, podcast_id, published_at, sponsor_id, sponsor_name, sponsor_company_id,
                      is_network_promo)
     select 'plain-' || i, 'ep-' || i, 'pod', '2024-01-01'::timestamptz + i * interval '1 minute', 'plain',
            'Plain ' || (i % 3), null, false
       from generate_series(1, 3000) i
     union all
     select 'named-' || i, 'ep-' || i, 'pod', '2024-01-01'::timestamptz + i * interval '1 minute', null, 'Named',
            case when i = 10 then 'acme' end, false
       from generate_series(1, 3000) i
     union all
     select 'other-' || i, 'oep-' || i, 'pod', '2024-01-01'::timestamptz + i * interval '1 minute', 'o' || (i % 300),
            'Other', 'co-' || (i % 100), false
       from generate_series(1, 30000) i`,
  );
  await db.query('analyze ads');
});
afterAll(() => drop());

/** Rows of ads read by `sponsorInfo`, from the transaction's own counters. */
async function adsRowsRead(keys: string[]) {
  return db.transaction(async (tx) => {
    const counters = async () =>
      (
        await tx.query<{ n: number }>(
          `select (coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::int as n
             from pg_stat_xact_user_tables where relname = 'ads' and schemaname = current_schema()`,
        )
      ).rows[0]!.n;
    const before = await counters();
    const info = await sponsorInfo(tx, keys);
    return { info, read: (await counters()) - before };
  });
}

describe("a sponsor's name and company", () => {
  it('are those of its latest ad, and of its latest ad naming a company', async () => {
    const { info } = await adsRowsRead(['plain', 'Named']);
    expect(info.get('plain')).toEqual({ sponsor_key: 'plain', name: 'Plain 0', company_id: null });
    expect(info.get('Named')).toEqual({ sponsor_key: 'Named', name: 'Named', company_id: 'acme' });
  });

  it('are read from a few rows, not from every ad of a sponsor whose ads name no company', async () => {
    const { read } = await adsRowsRead(['plain', 'Named']);
    expect(read).toBeLessThanOrEqual(10);
  });
});
