import type { Queryable } from '../../src/db/db.ts';
import type { Channel, DeliveryTarget, PublicStatus } from '../../src/delivery/delivery.ts';
import type { MatchedData } from '../../src/delivery/matched.ts';
import type { MatchDelivery } from '../../src/matching/http/match-resource.ts';

export interface DeliveryRow {
  id: string;
  alert_id: string;
  project_id: string;
  organization_id: string;
  alert_title: string;
  alert_kind: string;
  channel: Channel;
  target: DeliveryTarget;
  type: 'alert.match' | 'alert.digest';
  cadence: 'REALTIME' | 'DAILY' | 'WEEKLY';
  window_start: Date | null;
  window_end: Date | null;
  status: PublicStatus;
  is_final: boolean;
  created_at: Date;
  sent_at: Date | null;
  error_message: string | null;
  attempts: number;
  next_attempt_at: Date | null;
  match_count: number;
}

const COLUMNS = `id, alert_id, project_id, organization_id, alert_title, alert_kind, channel, target, type, cadence,
  window_start, window_end, status, is_final, created_at, sent_at, error_message, attempts, next_attempt_at, match_count`;

export async function findDelivery(db: Queryable, id: string): Promise<DeliveryRow | null> {
  const { rows } = await db.query<DeliveryRow>(`select ${COLUMNS} from deliveries where id = $1::text`, [id]);
  return rows[0] ?? null;
}

export interface DeliveryPosition {
  createdAt: string;
  id: string;
}

/** An alert's deliveries, newest first. */
export async function listAlertDeliveries(
  db: Queryable,
  alertId: string,
  options: { limit: number; after?: DeliveryPosition },
): Promise<DeliveryRow[]> {
  const { rows } = await db.query<DeliveryRow>(
    `select ${COLUMNS} from deliveries
      where alert_id = $1::text
        and ($2::timestamptz is null or (created_at, id) < ($2::timestamptz, $3::text))
      order by created_at desc, id desc
      limit $4::int`,
    [alertId, options.after?.createdAt ?? null, options.after?.id ?? null, options.limit],
  );
  return rows;
}

/**
 * The deliveries of one match (GET /v1/alerts/matches/{id}, `deliveries[]`): its realtime
 * deliveries and the digests that carried it, oldest first.
 */
export async function deliveriesOfMatch(db: Queryable, matchId: string): Promise<MatchDelivery[]> {
  return (await deliveriesOfMatches(db, [matchId])).get(matchId) ?? [];
}

/** The deliveries of each match, oldest first; sent_at and error_message are omitted when unknown. */
export async function deliveriesOfMatches(
  db: Queryable,
  matchIds: readonly string[],
): Promise<Map<string, MatchDelivery[]>> {
  const byMatch = new Map<string, MatchDelivery[]>();
  if (matchIds.length === 0) return byMatch;
  const { rows } = await db.query<
    Pick<DeliveryRow, 'id' | 'channel' | 'status' | 'created_at' | 'sent_at' | 'error_message'> & {
      match_id: string;
    }
  >(
    `select m.match_id, d.id, d.channel, d.status, d.created_at, d.sent_at, d.error_message
       from delivery_matches m join deliveries d on d.id = m.delivery_id
      where m.match_id = any($1::text[])
      order by d.created_at, d.id`,
    [matchIds],
  );
  for (const row of rows) {
    const list = byMatch.get(row.match_id) ?? [];
    list.push({
      id: row.id,
      channel: row.channel,
      status: row.status,
      created_at: row.created_at.toISOString(),
      ...(row.sent_at && { sent_at: row.sent_at.toISOString() }),
      ...(row.error_message !== null && { error_message: row.error_message }),
    });
    byMatch.set(row.match_id, list);
  }
  return byMatch;
}

export interface DeliveredMatch {
  deliveryId: string;
  ordinal: number;
  matchId: string;
  data: MatchedData;
  summary: string | null;
}

/**
 * How much of a match's windows a read needs: `all`; `mentions`, its mention lines only (as one
 * window of them); or `none`. Windows are nearly all of a match's size (up to 500,000 characters
 * of lines, docs/matching.md), so a view without them must not read them (docs/delivery.md).
 */
export type WindowsRead = 'all' | 'mentions' | 'none';

/** The SQL expression of a match copy's data (table alias `c`) read with `windows`. */
export const MATCH_DATA: Record<WindowsRead, string> = {
  all: 'c.data',
  mentions: `jsonb_set(c.data - 'windows', '{windows}', jsonb_build_array(jsonb_build_object(
      'lines', jsonb_path_query_array(c.data, '$.windows[*].lines[*] ? (@.is_mention == true)'))))`,
  none: `c.data - 'windows'`,
};

/** Matches of deliveries in order, `limit` per delivery after `afterOrdinal` (copies not yet written are left out). */
export async function deliveryMatches(
  db: Queryable,
  deliveryIds: readonly string[],
  options: { limit: number; afterOrdinal?: number; windows: WindowsRead },
): Promise<DeliveredMatch[]> {
  if (deliveryIds.length === 0) return [];
  const { rows } = await db.query<{
    delivery_id: string;
    ordinal: number;
    match_id: string;
    data: MatchedData;
    summary: string | null;
  }>(
    `select m.delivery_id, m.ordinal, m.match_id, ${MATCH_DATA[options.windows]} as data, c.summary
       from unnest($1::text[]) as d(id)
       cross join lateral (
         select dm.delivery_id, dm.ordinal, dm.match_id from delivery_matches dm
          where dm.delivery_id = d.id and dm.ordinal > $2::int
          order by dm.ordinal limit $3::int) m
       join delivery_match_copies c on c.match_id = m.match_id
      order by m.delivery_id, m.ordinal`,
    [deliveryIds, options.afterOrdinal ?? -1, options.limit],
  );
  return rows.map((row) => ({
    deliveryId: row.delivery_id,
    ordinal: row.ordinal,
    matchId: row.match_id,
    data: row.data,
    summary: row.summary,
  }));
}

export interface AttemptRow {
  attempt: number;
  attempted_at: Date;
  outcome: 'sent' | 'failed';
  status_code: number | null;
  response: string | null;
  error: string | null;
  duration_ms: number | null;
  payload_sha256: string | null;
  recipients: Array<{ email: string; ok: boolean; response?: string; error?: string }> | null;
}

export async function deliveryAttempts(db: Queryable, deliveryId: string): Promise<AttemptRow[]> {
  const { rows } = await db.query<AttemptRow>(
    `select attempt, attempted_at, outcome, status_code, response, error, duration_ms, payload_sha256, recipients
       from delivery_attempts where delivery_id = $1::text order by attempt`,
    [deliveryId],
  );
  return rows;
}
