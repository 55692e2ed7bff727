import { NotFoundError, PlanError, ValidationError } from '../errors.ts';
import type {
  Alert,
  AlertEvent,
  AlertState,
  ConfigChanges,
  DisableToken,
  EntityRef,
  Notification,
} from './alert.ts';
import type { AlertDraft, AlertPatch } from './input.ts';
import { ALERTS_PER_PACK, type AlertKind, activeAlertAllowance, type Plan } from './values.ts';

/**
 * What the command handler looked up before deciding; decide only judges it. Each list names what
 * failed, so an empty list is a pass.
 */
export interface ReferenceFacts {
  /** The canonical entity the request's entity resolved to; null = it resolves to nothing. */
  entity?: EntityRef | null;
  unverifiedEmails: string[];
  /** Webhook connections that are not this project's or are revoked. */
  unusableWebhookConnections: string[];
  /** Chat connections that are not this project's or are deleted. */
  unusableChatConnections: string[];
}

export interface PlanFacts {
  plan: Plan;
  alertPacks: number;
  /** Active alerts of the organization, not counting the one being decided. */
  activeAlerts: number;
}

export type AlertCommand =
  | {
      type: 'CreateAlert';
      data: {
        alertId: string;
        projectId: string;
        organizationId: string;
        draft: AlertDraft;
        references: ReferenceFacts;
        plan: PlanFacts;
        /** A fresh token for every EMAIL recipient of the draft. */
        issuedTokens: DisableToken[];
        now: Date;
      };
    }
  | {
      type: 'UpdateAlert';
      data: {
        alertId: string;
        projectId: string;
        patch: AlertPatch;
        references: ReferenceFacts;
        plan: PlanFacts;
        /** Fresh tokens for the patch's EMAIL recipients; only those not already on the alert are used. */
        issuedTokens: DisableToken[];
        now: Date;
      };
    }
  | { type: 'PauseAlert'; data: { alertId: string; projectId: string; now: Date } }
  | { type: 'ResumeAlert'; data: { alertId: string; projectId: string; plan: PlanFacts; now: Date } }
  | { type: 'DeleteAlert'; data: { alertId: string; projectId: string; now: Date } }
  | { type: 'DisableAlertByRecipient'; data: { alertId: string; tokenSha256: string; now: Date } };

export function decide(command: AlertCommand, state: AlertState): AlertEvent[] {
  switch (command.type) {
    case 'CreateAlert':
      return createAlert(command.data, state);
    case 'UpdateAlert':
      return updateAlert(command.data, state);
    case 'PauseAlert':
      return pauseAlert(command.data, state);
    case 'ResumeAlert':
      return resumeAlert(command.data, state);
    case 'DeleteAlert':
      return deleteAlert(command.data, state);
    case 'DisableAlertByRecipient':
      return disableAlertByRecipient(command.data, state);
    default: {
      const unhandled: never = command;
      return unhandled;
    }
  }
}

type Data<T extends AlertCommand['type']> = Extract<AlertCommand, { type: T }>['data'];

function createAlert(command: Data<'CreateAlert'>, state: AlertState): AlertEvent[] {
  if (state.status !== 'initial') {
    throw new ValidationError('alert_exists', `Alert ${command.alertId} already exists.`);
  }
  const { draft, references, organizationId } = command;
  assertPlanHasAlerts(command.plan, organizationId);
  assertSpeakerRoles(draft.kind, draft.filters.speakerRoles);
  const entity = resolvedEntity(draft.entity, references);
  assertReferences(references, draft.notifications);
  if (draft.isActive) assertAllowance(command.plan, organizationId);
  const at = command.now.toISOString();
  const events: AlertEvent[] = [
    {
      type: 'AlertCreated',
      data: {
        alertId: command.alertId,
        projectId: command.projectId,
        organizationId,
        title: draft.title,
        description: draft.description,
        kind: draft.kind,
        deliveryCadence: draft.deliveryCadence,
        entity,
        notifications: draft.notifications,
        filters: draft.filters,
        disableTokens: tokensFor(draft.notifications, {}, command.issuedTokens),
        createdAt: at,
      },
    },
  ];
  if (!draft.isActive) events.push({ type: 'AlertPaused', data: { alertId: command.alertId, pausedAt: at } });
  return events;
}

function updateAlert(command: Data<'UpdateAlert'>, state: AlertState): AlertEvent[] {
  const alert = existing(state, command.alertId, command.projectId);
  const { patch, references } = command;
  if (patch.kind !== undefined && patch.kind !== alert.kind) {
    throw new ValidationError('kind_immutable', `kind is fixed at creation; this alert is ${alert.kind}.`, [
      { location: '/kind', message: `must be ${alert.kind} or omitted`, value: patch.kind },
    ]);
  }
  if (patch.filters) assertSpeakerRoles(alert.kind, patch.filters.speakerRoles);
  const entity = patch.entity ? resolvedEntity(patch.entity, references) : undefined;
  assertReferences(references, patch.notifications);

  const candidate: ConfigChanges = {};
  if (patch.title !== undefined) candidate.title = patch.title;
  if (patch.description !== undefined) candidate.description = patch.description;
  if (patch.deliveryCadence !== undefined) candidate.deliveryCadence = patch.deliveryCadence;
  if (entity !== undefined) candidate.entity = entity;
  if (patch.notifications !== undefined) candidate.notifications = patch.notifications;
  if (patch.filters !== undefined) candidate.filters = patch.filters;
  const changes: ConfigChanges = {};
  for (const [key, value] of Object.entries(candidate) as [keyof ConfigChanges, unknown][]) {
    if (!sameValue(value, alert[key])) Object.assign(changes, { [key]: value });
  }

  const events: AlertEvent[] = [];
  const at = command.now.toISOString();
  if (Object.keys(changes).length > 0) {
    const disableTokens = changes.notifications
      ? tokensFor(changes.notifications, alert.disableTokens, command.issuedTokens)
      : [];
    events.push({ type: 'AlertUpdated', data: { alertId: alert.id, changes, disableTokens, updatedAt: at } });
  }
  if (patch.isActive === false) events.push(...pauseAlert(command, state));
  if (patch.isActive === true) events.push(...resumeAlert(command, state));
  return events;
}

function pauseAlert(command: Data<'PauseAlert'>, state: AlertState): AlertEvent[] {
  const alert = existing(state, command.alertId, command.projectId);
  // Paused and disabled alerts are already inactive: pausing again changes nothing.
  if (state.status !== 'active') return [];
  return [{ type: 'AlertPaused', data: { alertId: alert.id, pausedAt: command.now.toISOString() } }];
}

function resumeAlert(command: Data<'ResumeAlert'>, state: AlertState): AlertEvent[] {
  const alert = existing(state, command.alertId, command.projectId);
  if (state.status === 'active') return [];
  assertPlanHasAlerts(command.plan, alert.organizationId);
  assertAllowance(command.plan, alert.organizationId);
  return [{ type: 'AlertResumed', data: { alertId: alert.id, resumedAt: command.now.toISOString() } }];
}

function deleteAlert(command: Data<'DeleteAlert'>, state: AlertState): AlertEvent[] {
  const alert = existing(state, command.alertId, command.projectId);
  return [{ type: 'AlertDeleted', data: { alertId: alert.id, deletedAt: command.now.toISOString() } }];
}

function disableAlertByRecipient(command: Data<'DisableAlertByRecipient'>, state: AlertState): AlertEvent[] {
  const token =
    state.status === 'initial'
      ? undefined
      : Object.values(state.alert.disableTokens).find((t) => t.tokenSha256 === command.tokenSha256);
  if (state.status === 'initial' || !token) throw unknownDisableToken();
  // A deleted or already disabled alert sends nothing more: the click succeeds without an event.
  if (state.status === 'deleted' || state.status === 'disabled') return [];
  return [
    {
      type: 'AlertDisabledByRecipient',
      data: { alertId: state.alert.id, email: token.email, disabledAt: command.now.toISOString() },
    },
  ];
}

export const unknownDisableToken = () =>
  new NotFoundError(
    'disable_token_not_found',
    'This disable link is not valid (any more): no alert sends to it.',
  );

export const alertNotFound = (alertId: string) =>
  new NotFoundError('alert_not_found', `No alert ${alertId}.`);

/** The alert when it exists, is not deleted and belongs to the caller's project; otherwise 404. */
function existing(state: AlertState, alertId: string, projectId: string): Alert {
  if (state.status === 'initial' || state.status === 'deleted' || state.alert.projectId !== projectId) {
    throw alertNotFound(alertId);
  }
  return state.alert;
}

function assertPlanHasAlerts(plan: PlanFacts, organizationId: string) {
  if (activeAlertAllowance(plan.plan, plan.alertPacks) !== null) return;
  throw new PlanError('plan_does_not_support_alerts', `The ${plan.plan} plan does not include alerts.`, {
    message: 'Alerts need the TEAM, BUSINESS or ENTERPRISE plan. An operator can change the plan.',
    action: `earshot org set-plan --org ${organizationId} --plan TEAM`,
  });
}

function assertAllowance(plan: PlanFacts, organizationId: string) {
  const allowance = activeAlertAllowance(plan.plan, plan.alertPacks) ?? 0;
  if (plan.activeAlerts + 1 <= allowance) return;
  throw new PlanError(
    'add_on_required',
    `The organization already has ${plan.activeAlerts} active alerts, its allowance on ${plan.plan} with ${plan.alertPacks} Alerts Pack(s).`,
    {
      message: `Each Alerts Pack add-on allows ${ALERTS_PER_PACK} more active alerts; or pause or delete an active alert (paused alerts do not count).`,
      action: `earshot org add-on --org ${organizationId} --quantity ${plan.alertPacks + 1}`,
    },
  );
}

function assertSpeakerRoles(kind: AlertKind, speakerRoles: readonly string[] | undefined) {
  if (!speakerRoles?.length || kind === 'PODCAST_SPEAKER') return;
  throw new ValidationError(
    'speaker_roles_not_allowed',
    'filters.speaker_roles applies only to PODCAST_SPEAKER alerts.',
    [{ location: '/filters/speaker_roles', message: `not allowed for kind ${kind}`, value: speakerRoles }],
  );
}

function resolvedEntity(requested: EntityRef, references: ReferenceFacts): EntityRef {
  if (references.entity) return references.entity;
  throw new ValidationError(
    'unresolved_reference',
    `entities[0].entity_id ${requested.entityId} resolves to no ${requested.entityType}; find ids with GET /v1/entities/search.`,
    [
      {
        location: '/entities/0/entity_id',
        message: 'resolves to nothing; call GET /v1/entities/search',
        value: requested.entityId,
      },
    ],
  );
}

function assertReferences(references: ReferenceFacts, notifications: readonly Notification[] = []) {
  const at = (index: number, field: string) => `/notifications/${index}/${field}`;
  const unverified = new Set(references.unverifiedEmails);
  const emailIssues = notifications.flatMap((n, index) =>
    n.type === 'EMAIL' && unverified.has(n.email)
      ? [{ location: at(index, 'email'), message: 'is not verified for this organization', value: n.email }]
      : [],
  );
  if (unverified.size > 0) {
    throw new ValidationError(
      'email_not_verified',
      'Every EMAIL recipient must be an address already verified for the organization.',
      emailIssues,
    );
  }
  const webhooks = new Set(references.unusableWebhookConnections);
  const chats = new Set(references.unusableChatConnections);
  const connectionIssues = notifications.flatMap((n, index) => {
    if (n.type === 'WEBHOOK' && webhooks.has(n.webhookConnectionId))
      return [
        {
          location: at(index, 'webhook_connection_id'),
          message: 'is not a live webhook connection of this project',
          value: n.webhookConnectionId,
        },
      ];
    if (n.type === 'CHAT' && chats.has(n.chatConnectionId))
      return [
        {
          location: at(index, 'chat_connection_id'),
          message: 'is not a live chat connection of this project',
          value: n.chatConnectionId,
        },
      ];
    return [];
  });
  if (webhooks.size + chats.size > 0) {
    throw new ValidationError(
      'connection_unavailable',
      "A notification names a connection that is not this project's, or that was revoked or deleted.",
      connectionIssues,
    );
  }
}

/** Tokens for the EMAIL recipients that have none yet. */
function tokensFor(
  notifications: readonly Notification[],
  current: Record<string, DisableToken>,
  issued: readonly DisableToken[],
): DisableToken[] {
  const out: DisableToken[] = [];
  for (const n of notifications) {
    if (n.type !== 'EMAIL' || current[n.email]) continue;
    const token = issued.find((t) => t.email === n.email);
    if (!token) throw new Error(`No disable token was issued for ${n.email}.`);
    out.push(token);
  }
  return out;
}

function stable(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stable(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const sameValue = (a: unknown, b: unknown) => stable(a) === stable(b);
