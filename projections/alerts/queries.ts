import type { Alert, AlertStatus } from '../../src/alerts/alert.ts';
import type { Queryable } from '../../src/db/db.ts';
import { ALERT_COLUMNS, type AlertRow, alertFromRow } from './rows.ts';

export interface StoredAlert {
  alert: Alert;
  status: AlertStatus;
  revision: number;
}

const stored = (row: AlertRow): StoredAlert => ({
  alert: alertFromRow(row),
  status: row.status,
  revision: row.revision,
});

/** One alert as the read model has it, deleted ones included (callers decide what a deletion means). */
export async function findAlert(db: Queryable, id: string): Promise<StoredAlert | null> {
  const { rows } = await db.query<AlertRow>(`select ${ALERT_COLUMNS} from alerts where id = $1::text`, [id]);
  return rows[0] ? stored(rows[0]) : null;
}

export interface AlertPosition {
  createdAt: string;
  id: string;
}

export interface ListedAlert extends StoredAlert {
  status: Exclude<AlertStatus, 'deleted'>;
}

/** A project's alerts that are not deleted, newest first, `limit` of them after `after`. */
export async function listAlerts(
  db: Queryable,
  projectId: string,
  options: { limit: number; after?: AlertPosition },
): Promise<ListedAlert[]> {
  const { rows } = await db.query<AlertRow>(
    `select ${ALERT_COLUMNS} from alerts
      where project_id = $1::text and status <> 'deleted'
        and ($2::timestamptz is null or (created_at, id) < ($2::timestamptz, $3::text))
      order by created_at desc, id desc
      limit $4::int`,
    [projectId, options.after?.createdAt ?? null, options.after?.id ?? null, options.limit],
  );
  return rows.flatMap((row) => (row.status === 'deleted' ? [] : [{ ...stored(row), status: row.status }]));
}

export interface DisableTokenRecord {
  alertId: string;
  email: string;
  tokenId: string;
}

export async function findDisableToken(
  db: Queryable,
  tokenSha256: string,
): Promise<DisableTokenRecord | null> {
  const { rows } = await db.query<{ alert_id: string; email: string; token_id: string }>(
    'select alert_id, email, token_id from alert_disable_tokens where token_sha256 = $1::text',
    [tokenSha256],
  );
  const row = rows[0];
  return row ? { alertId: row.alert_id, email: row.email, tokenId: row.token_id } : null;
}
