import type { Db, Queryable } from '../../src/db/db.ts';

/**
 * The realtime matcher's snapshot (docs/matching-pipeline.md, "Restart"): the shows' languages and
 * the entities' names as of a position in its feed, in matcher_snapshot and
 * matcher_snapshot_entries (migration 0252). Alerts are not in it: their events are replayed whole.
 */

export interface SnapshotEntry {
  kind: 'show' | 'entity';
  key: string;
  /** occurred_at of the version held, epoch ms. */
  at: number;
  /** 'show': { language }; 'entity': { names }. */
  value: { language: string } | { names: readonly string[] };
}

export interface Snapshot {
  position: string;
  entries: SnapshotEntry[];
}

const SNAPSHOT_NAME = 'matcher';
const ENTRIES_PER_STATEMENT = 5000;

/** The stored snapshot's position; undefined when none was written. */
export async function readSnapshotPosition(q: Queryable): Promise<string | undefined> {
  const { rows } = await q.query<{ position: string }>(
    'select position from matcher_snapshot where name = $1',
    [SNAPSHOT_NAME],
  );
  return rows[0]?.position;
}

/** The stored snapshot, position and entries read in one transaction. */
export async function readSnapshot(db: Db): Promise<Snapshot | undefined> {
  return db.transaction(async (tx) => {
    // Repeatable read: the entries as of the position read first.
    await tx.query('set transaction isolation level repeatable read');
    const position = await readSnapshotPosition(tx);
    if (position === undefined) return undefined;
    const { rows } = await tx.query<SnapshotEntry>(
      'select kind, key, at, value from matcher_snapshot_entries',
    );
    return { position, entries: rows };
  });
}

/**
 * Writes `entries` and moves the snapshot from `from` (undefined: none stored) to `position`, in
 * one transaction; `replace` deletes the stored entries first. False, and nothing written, when the
 * stored snapshot is no longer at `from` (another writer moved it).
 */
export async function writeSnapshot(
  db: Db,
  write: { from: string | undefined; position: string; replace: boolean; entries: readonly SnapshotEntry[] },
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const moved =
      write.from === undefined
        ? await tx.query(
            'insert into matcher_snapshot (name, position) values ($1, $2) on conflict (name) do nothing',
            [SNAPSHOT_NAME, write.position],
          )
        : await tx.query(
            'update matcher_snapshot set position = $3, written_at = now() where name = $1 and position = $2',
            [SNAPSHOT_NAME, write.from, write.position],
          );
    if (moved.rowCount !== 1) return false;
    if (write.replace) await tx.query('delete from matcher_snapshot_entries');
    for (let i = 0; i < write.entries.length; i += ENTRIES_PER_STATEMENT) {
      const chunk = write.entries.slice(i, i + ENTRIES_PER_STATEMENT);
      await tx.query(
        `insert into matcher_snapshot_entries (kind, key, at, value)
         select u.kind, u.key, u.at, u.value
           from unnest($1::text[], $2::text[], $3::float8[], $4::json[]) as u(kind, key, at, value)
         on conflict (kind, key) do update set at = excluded.at, value = excluded.value`,
        [
          chunk.map((e) => e.kind),
          chunk.map((e) => e.key),
          chunk.map((e) => e.at),
          chunk.map((e) => JSON.stringify(e.value)),
        ],
      );
    }
    return true;
  });
}
