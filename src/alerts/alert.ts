import type { EventStore, ExpectedRevision, RecordedEvent } from '../eventstore/port.ts';
import type { EntityType } from '../ingestion/events.ts';
import type { AlertKind, DeliveryCadence, FilterSpeakerRole, Relevance, SourcePopularity } from './values.ts';

/** One alert is one stream: its events, state and evolve live here; commands and decide in decide.ts. */
export const alertStream = (alertId: string) => `alert-${alertId}`;

export interface EntityRef {
  entityType: EntityType;
  entityId: string;
}

export type Notification =
  | { type: 'EMAIL'; email: string }
  | { type: 'CHAT'; chatConnectionId: string; chatChannelId: string }
  | { type: 'WEBHOOK'; webhookConnectionId: string };

/** Only the axes that are set; an empty object means no filtering. */
export interface AlertFilters {
  languages?: string[];
  relevance?: Relevance;
  sourcePopularity?: SourcePopularity[];
  speakerRoles?: FilterSpeakerRole[];
}

export interface AlertConfig {
  title: string;
  description: string | null;
  kind: AlertKind;
  deliveryCadence: DeliveryCadence;
  entity: EntityRef;
  notifications: Notification[];
  filters: AlertFilters;
}

/**
 * A recipient's footer token is derived, never stored: only its sha256 is kept, with the random
 * tokenId the email sender needs to derive it again (see disable-tokens.ts).
 */
export interface DisableToken {
  email: string;
  tokenId: string;
  tokenSha256: string;
}

export type ConfigChanges = Partial<Omit<AlertConfig, 'kind'>>;

export interface AlertCreated {
  type: 'AlertCreated';
  data: AlertConfig & {
    alertId: string;
    projectId: string;
    organizationId: string;
    disableTokens: DisableToken[];
    createdAt: string;
  };
}
export interface AlertUpdated {
  type: 'AlertUpdated';
  data: { alertId: string; changes: ConfigChanges; disableTokens: DisableToken[]; updatedAt: string };
}
export interface AlertPaused {
  type: 'AlertPaused';
  data: { alertId: string; pausedAt: string };
}
export interface AlertResumed {
  type: 'AlertResumed';
  data: { alertId: string; resumedAt: string };
}
export interface AlertDeleted {
  type: 'AlertDeleted';
  data: { alertId: string; deletedAt: string };
}
export interface AlertDisabledByRecipient {
  type: 'AlertDisabledByRecipient';
  data: { alertId: string; email: string; disabledAt: string };
}

export type AlertEvent =
  | AlertCreated
  | AlertUpdated
  | AlertPaused
  | AlertResumed
  | AlertDeleted
  | AlertDisabledByRecipient;

export type AlertEventType = AlertEvent['type'];
export const ALERT_EVENT_TYPES: readonly AlertEventType[] = [
  'AlertCreated',
  'AlertUpdated',
  'AlertPaused',
  'AlertResumed',
  'AlertDeleted',
  'AlertDisabledByRecipient',
];

export interface Alert extends AlertConfig {
  id: string;
  projectId: string;
  organizationId: string;
  /** Keyed by email: the token of each current EMAIL recipient. */
  disableTokens: Record<string, DisableToken>;
  createdAt: string;
  updatedAt: string;
  pausedAt: string | null;
  disabledAt: string | null;
  disabledBy: string | null;
  deletedAt: string | null;
}

export type AlertStatus = 'active' | 'paused' | 'disabled' | 'deleted';

export type AlertState = { status: 'initial' } | { status: AlertStatus; alert: Alert };

export const initialAlertState = (): AlertState => ({ status: 'initial' });

const emailsOf = (notifications: Notification[]) =>
  new Set(notifications.flatMap((n) => (n.type === 'EMAIL' ? [n.email] : [])));

/** Tokens of recipients still present, plus the ones issued now. */
function withTokens(
  current: Record<string, DisableToken>,
  notifications: Notification[],
  issued: DisableToken[],
): Record<string, DisableToken> {
  const emails = emailsOf(notifications);
  const next: Record<string, DisableToken> = {};
  for (const [email, token] of Object.entries(current)) if (emails.has(email)) next[email] = token;
  for (const token of issued) if (emails.has(token.email)) next[token.email] = token;
  return next;
}

export function evolve(state: AlertState, event: AlertEvent): AlertState {
  switch (event.type) {
    case 'AlertCreated': {
      const { alertId, projectId, organizationId, disableTokens, createdAt, ...config } = event.data;
      return {
        status: 'active',
        alert: {
          ...config,
          id: alertId,
          projectId,
          organizationId,
          disableTokens: withTokens({}, config.notifications, disableTokens),
          createdAt,
          updatedAt: createdAt,
          pausedAt: null,
          disabledAt: null,
          disabledBy: null,
          deletedAt: null,
        },
      };
    }
    case 'AlertUpdated': {
      if (state.status === 'initial') return state;
      const { changes, disableTokens, updatedAt } = event.data;
      const alert = { ...state.alert, ...changes, updatedAt };
      alert.disableTokens = withTokens(state.alert.disableTokens, alert.notifications, disableTokens);
      return { status: state.status, alert };
    }
    case 'AlertPaused':
      if (state.status === 'initial') return state;
      return {
        status: 'paused',
        alert: { ...state.alert, pausedAt: event.data.pausedAt, updatedAt: event.data.pausedAt },
      };
    case 'AlertResumed':
      if (state.status === 'initial') return state;
      return {
        status: 'active',
        alert: {
          ...state.alert,
          pausedAt: null,
          disabledAt: null,
          disabledBy: null,
          updatedAt: event.data.resumedAt,
        },
      };
    case 'AlertDeleted':
      if (state.status === 'initial') return state;
      return {
        status: 'deleted',
        alert: { ...state.alert, deletedAt: event.data.deletedAt, updatedAt: event.data.deletedAt },
      };
    case 'AlertDisabledByRecipient':
      if (state.status === 'initial') return state;
      return {
        status: 'disabled',
        alert: {
          ...state.alert,
          pausedAt: null,
          disabledAt: event.data.disabledAt,
          disabledBy: event.data.email,
          updatedAt: event.data.disabledAt,
        },
      };
    default: {
      const unhandled: never = event;
      return unhandled;
    }
  }
}

export const foldAlert = (events: readonly AlertEvent[], state: AlertState = initialAlertState()) =>
  events.reduce(evolve, state);

/** The one place a stored event becomes a typed alert event: the stream holds only these. */
export const toAlertEvent = (recorded: Pick<RecordedEvent, 'type' | 'data'>): AlertEvent =>
  ({ type: recorded.type, data: recorded.data }) as AlertEvent;

/**
 * An alert folded from its stream (not the read model: a just-created or just-changed alert is
 * seen at once), with the revision to append after (`no_stream` when there is none).
 */
export async function loadAlert(
  store: Pick<EventStore, 'readStream'>,
  alertId: string,
): Promise<{ state: AlertState; revision: ExpectedRevision }> {
  const events = await store.readStream(alertStream(alertId));
  return {
    state: foldAlert(events.map(toAlertEvent)),
    revision: events.length === 0 ? 'no_stream' : events.at(-1)!.revision,
  };
}
