import type { Queryable } from '../../src/db/db.ts';
import {
  type AttemptRecord,
  advance,
  DELIVERY_EVENT_TYPES,
  type DeliveryCreated,
  type DeliveryCreatedData,
  type DeliveryEvent,
  type DeliveryProgress,
  type DeliveryStatus,
  isFinal,
  type PublicStatus,
  publicStatus,
  toDeliveryEvent,
} from '../../src/delivery/delivery.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';

/** The columns of a delivery row that change after creation. */
interface StatusRow {
  id: string;
  status: PublicStatus;
  is_final: boolean;
  attempts: number;
  error_message: string | null;
  next_attempt_at: string | null;
  sent_at: string | null;
  revision: number;
}

type LaterEvent = Exclude<DeliveryEvent, DeliveryCreated>;

const statusOf = (row: StatusRow): DeliveryStatus => {
  switch (row.status) {
    case 'PENDING':
      return 'pending';
    case 'SENT':
      return 'sent';
    case 'SKIPPED':
      return 'skipped';
    case 'ABANDONED':
      return 'abandoned';
    case 'FAILED':
      return row.is_final ? 'failed' : 'retrying';
  }
};

/** The delivery's own transitions (src/delivery/delivery.ts `advance`), on the row's columns. */
function evolveRow(row: StatusRow, event: LaterEvent, revision: number): StatusRow {
  if (revision <= row.revision) return row;
  const progress: DeliveryProgress = {
    attempts: row.attempts,
    ...(row.error_message !== null && { lastError: row.error_message }),
    ...(row.next_attempt_at !== null && { nextAttemptAt: row.next_attempt_at }),
    ...(row.sent_at !== null && { sentAt: row.sent_at }),
  };
  const { status, delivery } = advance({ status: statusOf(row), delivery: progress }, event);
  return {
    ...row,
    revision,
    status: publicStatus(status),
    is_final: isFinal(status),
    attempts: delivery.attempts,
    error_message: delivery.lastError ?? null,
    next_attempt_at: delivery.nextAttemptAt ?? null,
    sent_at: delivery.sentAt ?? null,
  };
}

function attemptRow(record: AttemptRecord, outcome: 'sent' | 'failed', error: string | null) {
  return {
    delivery_id: record.deliveryId,
    attempt: record.attempt,
    attempted_at: record.attemptedAt,
    outcome,
    status_code: record.statusCode ?? null,
    response: record.response ?? null,
    error,
    duration_ms: record.durationMs,
    payload_sha256: record.payloadSha256 ?? null,
    recipients: record.recipients ?? null,
  };
}

/**
 * The deliveries read model: one row per delivery with its spec status, its matches in order,
 * and every attempt. A row remembers the stream revision it reflects, so a replayed event is a
 * no-op.
 */
export const deliveriesProjection: Projection = {
  name: 'deliveries',
  eventTypes: DELIVERY_EVENT_TYPES,
  async apply(tx: Queryable, events: readonly RecordedEvent[]) {
    const created: Array<DeliveryCreatedData & { revision: number }> = [];
    const later: Array<{ event: LaterEvent; revision: number; id: string }> = [];
    const attempts: ReturnType<typeof attemptRow>[] = [];
    for (const recorded of events) {
      const event = toDeliveryEvent(recorded);
      if (event.type === 'DeliveryCreated') created.push({ ...event.data, revision: recorded.revision });
      else later.push({ event, revision: recorded.revision, id: event.data.deliveryId });
      if (event.type === 'DeliveryAttemptFailed')
        attempts.push(attemptRow(event.data, 'failed', event.data.error));
      if (event.type === 'DeliverySent')
        attempts.push(attemptRow(event.data, 'sent', event.data.errorMessage ?? null));
    }

    if (created.length > 0) {
      const rows = created.map((c) => ({
        id: c.deliveryId,
        alert_id: c.alert.id,
        project_id: c.alert.project_id,
        organization_id: c.alert.organization_id,
        alert_title: c.alert.title,
        alert_kind: c.alert.kind,
        channel: c.channel,
        target: c.target,
        type: c.type,
        cadence: c.cadence,
        window_start: c.window?.start ?? null,
        window_end: c.window?.end ?? null,
        created_at: c.createdAt,
        match_count: c.matchIds.length,
        revision: c.revision,
      }));
      await tx.query(
        `insert into deliveries (id, alert_id, project_id, organization_id, alert_title, alert_kind, channel, target,
                                 type, cadence, window_start, window_end, status, is_final, created_at, attempts,
                                 match_count, revision)
         select r.id, r.alert_id, r.project_id, r.organization_id, r.alert_title, r.alert_kind, r.channel, r.target,
                r.type, r.cadence, r.window_start, r.window_end, 'PENDING', false, r.created_at, 0, r.match_count,
                r.revision
           from jsonb_to_recordset($1::jsonb) as r(id text, alert_id text, project_id text, organization_id text,
                alert_title text, alert_kind text, channel text, target jsonb, type text, cadence text,
                window_start timestamptz, window_end timestamptz, created_at timestamptz, match_count integer,
                revision integer)
         on conflict (id) do nothing`,
        [JSON.stringify(rows)],
      );
      const ids = created.flatMap((c) => c.matchIds.map(() => c.deliveryId));
      const ordinals = created.flatMap((c) => c.matchIds.map((_, i) => i));
      const matchIds = created.flatMap((c) => c.matchIds);
      await tx.query(
        `insert into delivery_matches (delivery_id, ordinal, match_id)
         select * from unnest($1::text[], $2::int[], $3::text[]) on conflict do nothing`,
        [ids, ordinals, matchIds],
      );
    }

    if (later.length > 0) {
      const ids = [...new Set(later.map((l) => l.id))];
      const { rows } = await tx.query<StatusRow & { next_attempt_at: Date | null; sent_at: Date | null }>(
        `select id, status, is_final, attempts, error_message, next_attempt_at, sent_at, revision
           from deliveries where id = any($1::text[])`,
        [ids],
      );
      const current = new Map<string, StatusRow>(
        rows.map((row) => [
          row.id,
          {
            ...row,
            next_attempt_at: row.next_attempt_at?.toISOString() ?? null,
            sent_at: row.sent_at?.toISOString() ?? null,
          },
        ]),
      );
      const changed = new Map<string, StatusRow>();
      for (const { event, revision, id } of later) {
        const row = changed.get(id) ?? current.get(id);
        if (!row) continue; // its DeliveryCreated is not in the read model: cannot happen in stream order
        const next = evolveRow(row, event, revision);
        if (next !== row) changed.set(id, next);
      }
      if (changed.size > 0) {
        await tx.query(
          `update deliveries d set status = r.status, is_final = r.is_final, attempts = r.attempts,
                  error_message = r.error_message, next_attempt_at = r.next_attempt_at, sent_at = r.sent_at,
                  revision = r.revision
             from jsonb_to_recordset($1::jsonb) as r(id text, status text, is_final boolean, attempts integer,
                  error_message text, next_attempt_at timestamptz, sent_at timestamptz, revision integer)
            where d.id = r.id and d.revision < r.revision`,
          [JSON.stringify([...changed.values()])],
        );
      }
    }

    if (attempts.length > 0) {
      await tx.query(
        `insert into delivery_attempts (delivery_id, attempt, attempted_at, outcome, status_code, response, error,
                                        duration_ms, payload_sha256, recipients)
         select r.delivery_id, r.attempt, r.attempted_at, r.outcome, r.status_code, r.response, r.error,
                r.duration_ms, r.payload_sha256, r.recipients
           from jsonb_to_recordset($1::jsonb) as r(delivery_id text, attempt integer, attempted_at timestamptz,
                outcome text, status_code integer, response text, error text, duration_ms integer,
                payload_sha256 text, recipients jsonb)
         on conflict do nothing`,
        [JSON.stringify(attempts)],
      );
    }
  },
  async reset(tx: Queryable) {
    await tx.query('delete from delivery_attempts');
    await tx.query('delete from delivery_matches');
    await tx.query('delete from deliveries');
  },
};
