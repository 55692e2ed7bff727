import type { Db, Queryable } from '../../src/db/db.ts';
import {
  type FollowedAlert,
  type KeptAlert,
  keptOf,
  slimState,
} from '../../src/matching/engine/live-watchlist.ts';

/**
 * The realtime matcher's snapshot (docs/matching-pipeline.md, "Restart"): the shows' languages and
 * the entities' names as of a position in its feed, in matcher_snapshot and
 * matcher_snapshot_entries (migration 0252), and the alerts it follows as of `alertsPosition`, in
 * matcher_snapshot_alerts (migration 0256).
 */

export interface SnapshotEntry {
  kind: 'show' | 'entity';
  key: string;
  /** occurred_at of the version held, epoch ms. */
  at: number;
  /** 'show': { language }; 'entity': { names }. */
  value: { language: string } | { names: readonly string[] };
}

export interface SnapshotAlert extends FollowedAlert {
  alertId: string;
}

export interface Snapshot {
  position: string;
  entries: SnapshotEntry[];
  /** The position `alerts` are as of; undefined when they were never written with this snapshot. */
  alertsPosition: string | undefined;
  alerts: SnapshotAlert[];
}

const SNAPSHOT_NAME = 'matcher';
const ROWS_PER_STATEMENT = 5000;

/** The stored snapshot's position; undefined when none was written. */
export async function readSnapshotPosition(q: Queryable): Promise<string | undefined> {
  const { rows } = await q.query<{ position: string }>(
    'select position from matcher_snapshot where name = $1',
    [SNAPSHOT_NAME],
  );
  return rows[0]?.position;
}

/** The stored snapshot, positions, entries and alerts read in one transaction. */
export async function readSnapshot(db: Db): Promise<Snapshot | undefined> {
  return db.transaction(async (tx) => {
    // Repeatable read: the rows as of the positions read first.
    await tx.query('set transaction isolation level repeatable read');
    const { rows: head } = await tx.query<{ position: string; alerts_position: string | null }>(
      'select position, alerts_position from matcher_snapshot where name = $1',
      [SNAPSHOT_NAME],
    );
    if (head[0] === undefined) return undefined;
    const { position, alerts_position } = head[0];
    const { rows: entries } = await tx.query<SnapshotEntry>(
      'select kind, key, at, value from matcher_snapshot_entries',
    );
    if (alerts_position === null) return { position, entries, alertsPosition: undefined, alerts: [] };
    const { rows } = await tx.query<{
      alert_id: string;
      revision: number;
      created_position: string;
      kept: KeptAlert;
    }>('select alert_id, revision, created_position, kept from matcher_snapshot_alerts');
    const alerts = rows.map((row) => ({
      alertId: row.alert_id,
      revision: row.revision,
      createdAt: row.created_position,
      state: slimState(row.alert_id, row.kept),
    }));
    return { position, entries, alertsPosition: alerts_position, alerts };
  });
}

/**
 * Writes `entries` and `alerts` and moves the snapshot (both its positions) from `from` (undefined:
 * none stored) to `position`, in one transaction; `replace` deletes the stored rows first. False,
 * and nothing written, when the stored snapshot is no longer at `from` (another writer moved it).
 */
export async function writeSnapshot(
  db: Db,
  write: {
    from: string | undefined;
    position: string;
    replace: boolean;
    entries: readonly SnapshotEntry[];
    alerts: readonly SnapshotAlert[];
  },
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const moved =
      write.from === undefined
        ? await tx.query(
            `insert into matcher_snapshot (name, position, alerts_position) values ($1, $2, $2)
             on conflict (name) do nothing`,
            [SNAPSHOT_NAME, write.position],
          )
        : await tx.query(
            `update matcher_snapshot set position = $3, alerts_position = $3, written_at = now()
              where name = $1 and position = $2`,
            [SNAPSHOT_NAME, write.from, write.position],
          );
    if (moved.rowCount !== 1) return false;
    if (write.replace) {
      await tx.query('delete from matcher_snapshot_entries');
      await tx.query('delete from matcher_snapshot_alerts');
    }
    for (let i = 0; i < write.entries.length; i += ROWS_PER_STATEMENT) {
      const chunk = write.entries.slice(i, i + ROWS_PER_STATEMENT);
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
    for (let i = 0; i < write.alerts.length; i += ROWS_PER_STATEMENT) {
      const chunk = write.alerts.slice(i, i + ROWS_PER_STATEMENT);
      await tx.query(
        `insert into matcher_snapshot_alerts (alert_id, revision, created_position, kept)
         select u.alert_id, u.revision, u.created_position, u.kept
           from unnest($1::text[], $2::bigint[], $3::text[], $4::json[])
             as u(alert_id, revision, created_position, kept)
         on conflict (alert_id) do update
           set revision = excluded.revision, created_position = excluded.created_position, kept = excluded.kept`,
        [
          chunk.map((a) => a.alertId),
          chunk.map((a) => a.revision),
          chunk.map((a) => a.createdAt),
          chunk.map((a) => JSON.stringify(keptOf(a.state))),
        ],
      );
    }
    return true;
  });
}
