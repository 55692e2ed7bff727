import type { Alert, AlertFilters, AlertStatus, Notification } from './alert.ts';

/** The alert as the API shows it (snake_case), built the same way from a fold or the read model. */
export interface AlertResource {
  id: string;
  project_id: string;
  organization_id: string;
  title: string;
  description?: string;
  kind: string;
  delivery_cadence: string;
  entities: { entity_type: string; entity_id: string }[];
  notifications: Record<string, string>[];
  filters: Record<string, unknown>;
  is_active: boolean;
  status: Exclude<AlertStatus, 'deleted'>;
  created_at: string;
  updated_at: string;
  paused_at?: string;
  disabled_at?: string;
}

export function notificationResource(n: Notification): Record<string, string> {
  switch (n.type) {
    case 'EMAIL':
      return { type: n.type, email: n.email };
    case 'CHAT':
      return { type: n.type, chat_connection_id: n.chatConnectionId, chat_channel_id: n.chatChannelId };
    case 'WEBHOOK':
      return { type: n.type, webhook_connection_id: n.webhookConnectionId };
  }
}

export function filtersResource(filters: AlertFilters): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (filters.languages) out.languages = filters.languages;
  if (filters.relevance) out.relevance = filters.relevance;
  if (filters.sourcePopularity) out.source_popularity = filters.sourcePopularity;
  if (filters.speakerRoles) out.speaker_roles = filters.speakerRoles;
  return out;
}

export function alertResource(alert: Alert, status: Exclude<AlertStatus, 'deleted'>): AlertResource {
  const resource: AlertResource = {
    id: alert.id,
    project_id: alert.projectId,
    organization_id: alert.organizationId,
    title: alert.title,
    kind: alert.kind,
    delivery_cadence: alert.deliveryCadence,
    entities: [{ entity_type: alert.entity.entityType, entity_id: alert.entity.entityId }],
    notifications: alert.notifications.map(notificationResource),
    filters: filtersResource(alert.filters),
    is_active: status === 'active',
    status,
    created_at: alert.createdAt,
    updated_at: alert.updatedAt,
  };
  if (alert.description !== null) resource.description = alert.description;
  if (alert.pausedAt) resource.paused_at = alert.pausedAt;
  if (alert.disabledAt) resource.disabled_at = alert.disabledAt;
  return resource;
}

const nullableString = { type: 'string' } as const;

/** JSON Schema of AlertResource, for the route responses and /openapi.json. */
export const alertResourceSchema = {
  type: 'object',
  required: [
    'id',
    'project_id',
    'organization_id',
    'title',
    'kind',
    'delivery_cadence',
    'entities',
    'notifications',
    'filters',
    'is_active',
    'status',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: { type: 'string' },
    project_id: { type: 'string' },
    organization_id: { type: 'string' },
    title: { type: 'string' },
    description: nullableString,
    kind: { type: 'string', enum: ['ENTITY_MENTION', 'PODCAST_SPEAKER'] },
    delivery_cadence: { type: 'string', enum: ['REALTIME', 'DAILY', 'WEEKLY'] },
    entities: {
      type: 'array',
      items: {
        type: 'object',
        required: ['entity_type', 'entity_id'],
        properties: { entity_type: { type: 'string' }, entity_id: { type: 'string' } },
      },
    },
    notifications: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type'],
        properties: {
          type: { type: 'string', enum: ['EMAIL', 'CHAT', 'WEBHOOK'] },
          email: { type: 'string' },
          chat_connection_id: { type: 'string' },
          chat_channel_id: { type: 'string' },
          webhook_connection_id: { type: 'string' },
        },
      },
    },
    filters: {
      type: 'object',
      properties: {
        languages: { type: 'array', items: { type: 'string' } },
        relevance: { type: 'string' },
        source_popularity: { type: 'array', items: { type: 'string' } },
        speaker_roles: { type: 'array', items: { type: 'string' } },
      },
    },
    is_active: { type: 'boolean' },
    status: { type: 'string', enum: ['active', 'paused', 'disabled'] },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    paused_at: { type: 'string', format: 'date-time' },
    disabled_at: { type: 'string', format: 'date-time' },
  },
} as const;
