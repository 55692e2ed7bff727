import type {
  Alert,
  AlertFilters,
  AlertState,
  AlertStatus,
  DisableToken,
  Notification,
} from '../../src/alerts/alert.ts';
import type { AlertKind, DeliveryCadence } from '../../src/alerts/values.ts';
import type { EntityType } from '../../src/ingestion/events.ts';

/** A row of the alerts table, as both drivers return it. */
export interface AlertRow {
  id: string;
  project_id: string;
  organization_id: string;
  title: string;
  description: string | null;
  kind: AlertKind;
  delivery_cadence: DeliveryCadence;
  entity_type: EntityType;
  entity_id: string;
  notifications: Notification[];
  filters: AlertFilters;
  disable_tokens: Record<string, DisableToken>;
  status: AlertStatus;
  created_at: Date;
  updated_at: Date;
  paused_at: Date | null;
  disabled_at: Date | null;
  disabled_by: string | null;
  deleted_at: Date | null;
  revision: number;
}

export const ALERT_COLUMNS = `id, project_id, organization_id, title, description, kind, delivery_cadence, entity_type,
  entity_id, notifications, filters, disable_tokens, status, created_at, updated_at, paused_at, disabled_at,
  disabled_by, deleted_at, revision`;

const iso = (value: Date | null) => (value ? value.toISOString() : null);

export function alertFromRow(row: AlertRow): Alert {
  return {
    id: row.id,
    projectId: row.project_id,
    organizationId: row.organization_id,
    title: row.title,
    description: row.description,
    kind: row.kind,
    deliveryCadence: row.delivery_cadence,
    entity: { entityType: row.entity_type, entityId: row.entity_id },
    notifications: row.notifications,
    filters: row.filters,
    disableTokens: row.disable_tokens,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    pausedAt: iso(row.paused_at),
    disabledAt: iso(row.disabled_at),
    disabledBy: row.disabled_by,
    deletedAt: iso(row.deleted_at),
  };
}

export const stateFromRow = (row: AlertRow): AlertState => ({ status: row.status, alert: alertFromRow(row) });

/** The row of a folded alert, for jsonb_to_recordset. */
export function rowOf(alert: Alert, status: AlertStatus, revision: number) {
  return {
    id: alert.id,
    project_id: alert.projectId,
    organization_id: alert.organizationId,
    title: alert.title,
    description: alert.description,
    kind: alert.kind,
    delivery_cadence: alert.deliveryCadence,
    entity_type: alert.entity.entityType,
    entity_id: alert.entity.entityId,
    notifications: alert.notifications,
    filters: alert.filters,
    disable_tokens: alert.disableTokens,
    status,
    created_at: alert.createdAt,
    updated_at: alert.updatedAt,
    paused_at: alert.pausedAt,
    disabled_at: alert.disabledAt,
    disabled_by: alert.disabledBy,
    deleted_at: alert.deletedAt,
    revision,
  };
}
