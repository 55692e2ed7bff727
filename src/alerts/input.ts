import type { ErrorDetail } from '../errors.ts';
import { ValidationError } from '../errors.ts';
import { ENTITY_TYPES } from '../ingestion/events.ts';
import { normaliseSpeakerRole } from '../matching/engine/roles.ts';
import type { AlertConfig, AlertFilters, EntityRef, Notification } from './alert.ts';
import {
  ALERT_KINDS,
  type AlertKind,
  DELIVERY_CADENCES,
  type DeliveryCadence,
  type FilterSpeakerRole,
  LANGUAGE_CODES,
  MAX_DESCRIPTION_LENGTH,
  MAX_EMAIL_LENGTH,
  MAX_ID_LENGTH,
  MAX_NOTIFICATIONS,
  MAX_TITLE_LENGTH,
  RELEVANCES,
  SOURCE_POPULARITIES,
  type SourcePopularity,
} from './values.ts';

/**
 * Turns a request body (the wire's snake_case alert configuration) into a normalised draft or
 * patch, or one ValidationError listing every problem with its JSON-pointer location. Pure: the
 * rules that need the stream's state or the database are in decide.ts.
 */
export interface AlertDraft extends AlertConfig {
  isActive: boolean;
}

export interface AlertPatch {
  title?: string;
  description?: string | null;
  kind?: AlertKind;
  deliveryCadence?: DeliveryCadence;
  entity?: EntityRef;
  notifications?: Notification[];
  filters?: AlertFilters;
  isActive?: boolean;
}

const CONFIG_KEYS = [
  'title',
  'description',
  'kind',
  'delivery_cadence',
  'entities',
  'notifications',
  'filters',
  'is_active',
];
const FILTER_KEYS = ['languages', 'relevance', 'source_popularity', 'speaker_roles'];
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** Text that shows nothing: whitespace and invisible format characters (zero-width space, BOM, …). */
const BLANK = /^[\s\p{Cf}]*$/u;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

class Issues {
  readonly list: ErrorDetail[] = [];
  add(location: string, message: string, value?: unknown) {
    const detail: ErrorDetail = { location, message };
    if (value !== undefined) detail.value = value;
    this.list.push(detail);
  }
  unknownKeys(object: Json, allowed: readonly string[], at: string) {
    for (const key of Object.keys(object))
      if (!allowed.includes(key)) this.add(`${at}/${key}`, 'is not a known property');
  }
}

function text(issues: Issues, value: unknown, at: string, max: number): string | undefined {
  if (typeof value !== 'string') return void issues.add(at, 'must be a string', value);
  const trimmed = value.trim();
  if (BLANK.test(trimmed)) return void issues.add(at, 'must not be empty', value);
  if (trimmed.length > max) return void issues.add(at, `must be at most ${max} characters`, value);
  return trimmed;
}

function oneOf<T extends string>(
  issues: Issues,
  value: unknown,
  allowed: readonly T[],
  at: string,
): T | undefined {
  const upper = typeof value === 'string' ? value.trim().toUpperCase() : undefined;
  if (upper !== undefined && (allowed as readonly string[]).includes(upper)) return upper as T;
  return void issues.add(at, `must be one of ${allowed.join(', ')}`, value);
}

function entity(issues: Issues, value: unknown): EntityRef | undefined {
  if (!Array.isArray(value))
    return void issues.add('/entities', 'must be an array with exactly one entity', value);
  // The spec names this rule's code: invalid_parameter, not the generic validation code.
  if (value.length !== 1)
    throw new ValidationError('invalid_parameter', 'An alert watches exactly one entity.', [
      { location: '/entities', message: `must contain exactly 1 entity, got ${value.length}`, value },
    ]);
  const item: unknown = value[0];
  if (!isObject(item)) return void issues.add('/entities/0', 'must be an object', item);
  issues.unknownKeys(item, ['entity_type', 'entity_id'], '/entities/0');
  const entityType = oneOf(issues, item.entity_type, ENTITY_TYPES, '/entities/0/entity_type');
  const entityId = text(issues, item.entity_id, '/entities/0/entity_id', MAX_ID_LENGTH);
  return entityType && entityId ? { entityType, entityId } : undefined;
}

function notification(issues: Issues, item: unknown, at: string): Notification | undefined {
  if (!isObject(item)) return void issues.add(at, 'must be an object', item);
  const type = oneOf(issues, item.type, ['EMAIL', 'CHAT', 'WEBHOOK'] as const, `${at}/type`);
  switch (type) {
    case 'EMAIL': {
      issues.unknownKeys(item, ['type', 'email'], at);
      const email = text(issues, item.email, `${at}/email`, MAX_EMAIL_LENGTH)?.toLowerCase();
      if (email === undefined) return undefined;
      if (!EMAIL_PATTERN.test(email))
        return void issues.add(`${at}/email`, 'must be an email address', item.email);
      return { type, email };
    }
    case 'CHAT': {
      issues.unknownKeys(item, ['type', 'chat_connection_id', 'chat_channel_id'], at);
      const chatConnectionId = text(
        issues,
        item.chat_connection_id,
        `${at}/chat_connection_id`,
        MAX_ID_LENGTH,
      );
      const chatChannelId = text(issues, item.chat_channel_id, `${at}/chat_channel_id`, MAX_ID_LENGTH);
      return chatConnectionId && chatChannelId ? { type, chatConnectionId, chatChannelId } : undefined;
    }
    case 'WEBHOOK': {
      issues.unknownKeys(item, ['type', 'webhook_connection_id'], at);
      const webhookConnectionId = text(
        issues,
        item.webhook_connection_id,
        `${at}/webhook_connection_id`,
        MAX_ID_LENGTH,
      );
      return webhookConnectionId ? { type, webhookConnectionId } : undefined;
    }
    default:
      return undefined;
  }
}

const notificationKey = (n: Notification) =>
  n.type === 'EMAIL'
    ? `EMAIL:${n.email}`
    : n.type === 'CHAT'
      ? `CHAT:${n.chatConnectionId}:${n.chatChannelId}`
      : `WEBHOOK:${n.webhookConnectionId}`;

function notifications(issues: Issues, value: unknown): Notification[] | undefined {
  if (!Array.isArray(value) || value.length < 1 || value.length > MAX_NOTIFICATIONS) {
    return void issues.add('/notifications', `must be an array of 1 to ${MAX_NOTIFICATIONS} channels`, value);
  }
  const parsed: Notification[] = [];
  const seen = new Set<string>();
  value.forEach((item, index) => {
    const channel = notification(issues, item, `/notifications/${index}`);
    if (!channel) return;
    const key = notificationKey(channel);
    if (seen.has(key)) {
      issues.add(`/notifications/${index}`, 'duplicates an earlier channel', item);
      return;
    }
    seen.add(key);
    parsed.push(channel);
  });
  return parsed.length === value.length ? parsed : undefined;
}

function list<T>(
  issues: Issues,
  value: unknown,
  at: string,
  one: (item: unknown, at: string) => T | undefined,
) {
  if (!Array.isArray(value)) return void issues.add(at, 'must be an array', value);
  const out: T[] = [];
  value.forEach((item, index) => {
    const parsed = one(item, `${at}/${index}`);
    if (parsed !== undefined && !out.includes(parsed)) out.push(parsed);
  });
  return out;
}

function filters(issues: Issues, value: unknown): AlertFilters | undefined {
  if (!isObject(value)) return void issues.add('/filters', 'must be an object', value);
  issues.unknownKeys(value, FILTER_KEYS, '/filters');
  const out: AlertFilters = {};
  if (value.languages !== undefined) {
    const languages = list(issues, value.languages, '/filters/languages', (item, at) => {
      const code = typeof item === 'string' ? item.trim().toLowerCase() : '';
      if (LANGUAGE_CODES.has(code)) return code;
      return void issues.add(at, 'must be a two-letter ISO 639-1 language code', item);
    });
    if (languages?.length) out.languages = languages;
  }
  if (value.relevance !== undefined) {
    const relevance = oneOf(issues, value.relevance, RELEVANCES, '/filters/relevance');
    if (relevance) out.relevance = relevance;
  }
  if (value.source_popularity !== undefined) {
    const popularity = list(issues, value.source_popularity, '/filters/source_popularity', (item, at) =>
      oneOf<SourcePopularity>(issues, item, SOURCE_POPULARITIES, at),
    );
    if (popularity?.length) out.sourcePopularity = popularity;
  }
  if (value.speaker_roles !== undefined) {
    const roles = list(issues, value.speaker_roles, '/filters/speaker_roles', (item, at) => {
      const role = normaliseSpeakerRole(item) ?? null;
      if (role === null) return void issues.add(at, 'must be one of the 14 speaker roles', item);
      if (role === 'HOST')
        return void issues.add(
          at,
          'HOST (or CO_HOST) cannot be filtered on: PODCAST_SPEAKER never matches hosts',
          item,
        );
      return role as FilterSpeakerRole;
    });
    if (roles?.length) out.speakerRoles = roles;
  }
  return out;
}

function fail(issues: Issues): never {
  throw new ValidationError('validation_failed', 'The alert configuration is invalid.', issues.list);
}

export function parseAlertDraft(body: unknown): AlertDraft {
  if (!isObject(body)) throw new ValidationError('validation_failed', 'The body must be a JSON object.');
  const issues = new Issues();
  issues.unknownKeys(body, CONFIG_KEYS, '');
  for (const key of ['title', 'entities', 'notifications'])
    if (body[key] === undefined) issues.add(`/${key}`, 'is required');
  const parsedEntity = body.entities === undefined ? undefined : entity(issues, body.entities);
  const title = body.title === undefined ? undefined : text(issues, body.title, '/title', MAX_TITLE_LENGTH);
  const parsedNotifications =
    body.notifications === undefined ? undefined : notifications(issues, body.notifications);
  const draft: Partial<AlertDraft> = {
    title,
    description: null,
    kind: 'ENTITY_MENTION',
    deliveryCadence: 'REALTIME',
    entity: parsedEntity,
    notifications: parsedNotifications,
    filters: {},
    isActive: true,
  };
  Object.assign(draft, optionalFields(issues, body));
  if (issues.list.length > 0) fail(issues);
  return draft as AlertDraft;
}

export function parseAlertPatch(body: unknown): AlertPatch {
  if (!isObject(body)) throw new ValidationError('validation_failed', 'The body must be a JSON object.');
  const issues = new Issues();
  issues.unknownKeys(body, CONFIG_KEYS, '');
  const patch: AlertPatch = optionalFields(issues, body);
  if (body.title !== undefined) patch.title = text(issues, body.title, '/title', MAX_TITLE_LENGTH);
  if (body.entities !== undefined) patch.entity = entity(issues, body.entities);
  if (body.notifications !== undefined) patch.notifications = notifications(issues, body.notifications);
  if (issues.list.length > 0) fail(issues);
  return patch;
}

/** The fields both create and update may carry, each only when supplied. */
function optionalFields(issues: Issues, body: Json): AlertPatch {
  const out: AlertPatch = {};
  if (body.description !== undefined) {
    // null or "" clears the description.
    if (body.description === null || body.description === '') out.description = null;
    else if (typeof body.description !== 'string')
      issues.add('/description', 'must be a string or null', body.description);
    else if (body.description.length > MAX_DESCRIPTION_LENGTH)
      issues.add('/description', `must be at most ${MAX_DESCRIPTION_LENGTH} characters`);
    else out.description = body.description;
  }
  if (body.kind !== undefined) {
    const kind = oneOf(issues, body.kind, ALERT_KINDS, '/kind');
    if (kind) out.kind = kind;
  }
  if (body.delivery_cadence !== undefined) {
    const cadence = oneOf(issues, body.delivery_cadence, DELIVERY_CADENCES, '/delivery_cadence');
    if (cadence) out.deliveryCadence = cadence;
  }
  if (body.filters !== undefined) {
    const parsed = filters(issues, body.filters);
    if (parsed) out.filters = parsed;
  }
  if (body.is_active !== undefined) {
    if (typeof body.is_active !== 'boolean') issues.add('/is_active', 'must be a boolean', body.is_active);
    else out.isActive = body.is_active;
  }
  return out;
}

/** The emails and connection ids a configuration names: what the handler must check in the database. */
export function referencesOf(notificationsList: readonly Notification[]) {
  const emails: string[] = [];
  const webhookConnectionIds: string[] = [];
  const chatConnectionIds: string[] = [];
  for (const n of notificationsList) {
    if (n.type === 'EMAIL') emails.push(n.email);
    else if (n.type === 'WEBHOOK') webhookConnectionIds.push(n.webhookConnectionId);
    else if (!chatConnectionIds.includes(n.chatConnectionId)) chatConnectionIds.push(n.chatConnectionId);
  }
  return { emails, webhookConnectionIds, chatConnectionIds };
}
