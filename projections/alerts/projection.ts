import {
  ALERT_EVENT_TYPES,
  type AlertState,
  evolve,
  initialAlertState,
  toAlertEvent,
} from '../../src/alerts/alert.ts';
import type { Queryable } from '../../src/db/db.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';
import { ALERT_COLUMNS, type AlertRow, rowOf, stateFromRow } from './rows.ts';

/**
 * The alerts read model. Each batch loads the rows it touches, folds the new events with the
 * decider's own evolve (so the read model cannot drift from the write side), and writes the rows
 * back. A row remembers the stream revision it has folded, so a replayed event is a no-op.
 */
export const alertsProjection: Projection = {
  name: 'alerts',
  eventTypes: ALERT_EVENT_TYPES,
  async apply(tx: Queryable, events: readonly RecordedEvent[]) {
    const byAlert = new Map<string, RecordedEvent[]>();
    for (const event of events) {
      const alertId = toAlertEvent(event).data.alertId;
      byAlert.set(alertId, [...(byAlert.get(alertId) ?? []), event]);
    }
    if (byAlert.size === 0) return;
    const { rows } = await tx.query<AlertRow>(
      `select ${ALERT_COLUMNS} from alerts where id = any($1::text[])`,
      [[...byAlert.keys()]],
    );
    const current = new Map(rows.map((row) => [row.id, row]));

    const changed: ReturnType<typeof rowOf>[] = [];
    for (const [alertId, alertEvents] of byAlert) {
      const row = current.get(alertId);
      let state: AlertState = row ? stateFromRow(row) : initialAlertState();
      let revision = row?.revision ?? -1;
      for (const event of alertEvents) {
        if (event.revision <= revision) continue;
        state = evolve(state, toAlertEvent(event));
        revision = event.revision;
      }
      if (state.status !== 'initial' && revision !== (row?.revision ?? -1)) {
        changed.push(rowOf(state.alert, state.status, revision));
      }
    }
    if (changed.length === 0) return;

    await tx.query(
      `insert into alerts (${ALERT_COLUMNS})
       select r.id, r.project_id, r.organization_id, r.title, r.description, r.kind, r.delivery_cadence,
              r.entity_type, r.entity_id, r.notifications, r.filters, r.disable_tokens, r.status, r.created_at,
              r.updated_at, r.paused_at, r.disabled_at, r.disabled_by, r.deleted_at, r.revision
         from jsonb_to_recordset($1::jsonb) as r(
              id text, project_id text, organization_id text, title text, description text, kind text,
              delivery_cadence text, entity_type text, entity_id text, notifications jsonb, filters jsonb,
              disable_tokens jsonb, status text, created_at timestamptz, updated_at timestamptz,
              paused_at timestamptz, disabled_at timestamptz, disabled_by text, deleted_at timestamptz,
              revision integer)
       on conflict (id) do update set
              title = excluded.title, description = excluded.description, delivery_cadence = excluded.delivery_cadence,
              entity_type = excluded.entity_type, entity_id = excluded.entity_id,
              notifications = excluded.notifications, filters = excluded.filters,
              disable_tokens = excluded.disable_tokens, status = excluded.status, updated_at = excluded.updated_at,
              paused_at = excluded.paused_at, disabled_at = excluded.disabled_at, disabled_by = excluded.disabled_by,
              deleted_at = excluded.deleted_at, revision = excluded.revision
        where alerts.revision < excluded.revision`,
      [JSON.stringify(changed)],
    );
    const ids = changed.map((row) => row.id);
    await tx.query('delete from alert_disable_tokens where alert_id = any($1::text[])', [ids]);
    const tokens = changed.flatMap((row) =>
      Object.values(row.disable_tokens).map((token) => ({
        token_sha256: token.tokenSha256,
        alert_id: row.id,
        email: token.email,
        token_id: token.tokenId,
      })),
    );
    if (tokens.length > 0) {
      await tx.query(
        `insert into alert_disable_tokens (token_sha256, alert_id, email, token_id)
         select r.token_sha256, r.alert_id, r.email, r.token_id
           from jsonb_to_recordset($1::jsonb) as r(token_sha256 text, alert_id text, email text, token_id text)
         on conflict (token_sha256) do nothing`,
        [JSON.stringify(tokens)],
      );
    }
  },
  async reset(tx: Queryable) {
    await tx.query('delete from alert_disable_tokens');
    await tx.query('delete from alerts');
  },
};
