import { findDisableToken } from '../../projections/alerts/queries.ts';
import { findCompany } from '../../projections/entities/knowledge.ts';
import { findEntity } from '../../projections/entities/queries.ts';
import { liveChatConnections } from '../chat/connections.ts';
import type { Db, Queryable } from '../db/db.ts';
import { BadRequestError, ConflictError, NotFoundError, WrongExpectedRevisionError } from '../errors.ts';
import type { EventStore, ExpectedRevision, NewEvent } from '../eventstore/port.ts';
import { base62 } from '../ids.ts';
import { verifiedEmails } from '../platform/organizations.ts';
import { liveWebhookConnections } from '../webhooks/connections.ts';
import {
  type AlertEvent,
  type AlertState,
  alertStream,
  type EntityRef,
  foldAlert,
  loadAlert,
  type Notification,
} from './alert.ts';
import {
  type AlertCommand,
  alertNotFound,
  decide,
  type PlanFacts,
  type ReferenceFacts,
  unknownDisableToken,
} from './decide.ts';
import { type DisableTokens, hashDisableToken, isWellFormedDisableToken } from './disable-tokens.ts';
import { type AlertPatch, parseAlertDraft, parseAlertPatch, referencesOf } from './input.ts';
import { QuotaReader, reconcileSlot, releaseSlot, releaseStaleSlots, takeSlot } from './quota.ts';
import { type AlertResource, alertResource } from './resource.ts';
import { activeAlertAllowance, type Plan } from './values.ts';

/** Resolves an alert's entity to its canonical id; null when it names nothing of that type. */
export interface EntityDirectory {
  resolve(ref: EntityRef): Promise<EntityRef | null>;
}

/**
 * The entities read model as the directory: a company by a company reference (findCompany), any
 * other entity by id or slug; the type must agree.
 */
export const entitiesReadModel = (db: Queryable): EntityDirectory => ({
  async resolve(ref) {
    const row =
      ref.entityType === 'COMPANY' ? await findCompany(db, ref.entityId) : await findEntity(db, ref.entityId);
    return row && row.entity_type === ref.entityType
      ? { entityType: row.entity_type, entityId: row.id }
      : null;
  },
});

export interface AlertServiceDeps {
  db: Db;
  store: EventStore;
  tokens: DisableTokens;
  entities: EntityDirectory;
  now(): Date;
  /** Decide-and-append attempts before a concurrent writer wins with 409. Default 8. */
  maxAttempts?: number;
}

export interface Caller {
  projectId: string;
  organizationId: string;
}

/** What the public disable endpoints show about a token. */
export interface DisableTokenView {
  alert: { id: string; title: string; kind: string };
  email: string;
  status: 'active' | 'paused' | 'disabled' | 'deleted';
  is_active: boolean;
}

interface Loaded<S> {
  state: S;
  revision: ExpectedRevision;
}

/** A short random wait, so writers that lost a race do not collide again in lockstep. */
const backoff = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * 2 ** Math.min(attempt, 5)));

const toNew = (events: readonly AlertEvent[]): NewEvent[] =>
  events.map((event) => ({ type: event.type, data: event.data }));

/**
 * The alert command handler: parse, look up what the rules need, decide, append with the
 * stream's expected revision, and answer from the folded events (read-your-writes). A lost race
 * re-reads and decides again; after maxAttempts the caller gets 409.
 */
export class AlertService {
  readonly #deps: AlertServiceDeps;
  /** Per organization, the tail of the in-process queue of commands that may take a slot. */
  readonly #activations = new Map<string, Promise<unknown>>();
  readonly #quotas: QuotaReader;

  constructor(deps: AlertServiceDeps) {
    this.#deps = deps;
    this.#quotas = new QuotaReader(deps.store);
  }

  async create(caller: Caller, body: unknown): Promise<AlertResource> {
    const draft = parseAlertDraft(body);
    const alertId = base62(22);
    const references = await this.#references(caller, draft.notifications, draft.entity);
    const issuedTokens = this.#issue(alertId, draft.notifications);
    const state = await this.#execute(caller.organizationId, alertId, draft.isActive, (_state, plan) => ({
      type: 'CreateAlert',
      data: { alertId, ...caller, draft, references, plan, issuedTokens, now: this.#deps.now() },
    }));
    return this.#resource(state, alertId);
  }

  async update(caller: Caller, alertId: string, body: unknown): Promise<AlertResource> {
    const patch: AlertPatch = parseAlertPatch(body);
    const references = await this.#references(caller, patch.notifications ?? [], patch.entity);
    const issuedTokens = this.#issue(alertId, patch.notifications ?? []);
    const state = await this.#execute(
      caller.organizationId,
      alertId,
      patch.isActive === true,
      (_state, plan) => ({
        type: 'UpdateAlert',
        data: {
          alertId,
          projectId: caller.projectId,
          patch,
          references,
          plan,
          issuedTokens,
          now: this.#deps.now(),
        },
      }),
    );
    return this.#resource(state, alertId);
  }

  async delete(caller: Caller, alertId: string): Promise<void> {
    await this.#execute(caller.organizationId, alertId, false, () => ({
      type: 'DeleteAlert',
      data: { alertId, projectId: caller.projectId, now: this.#deps.now() },
    }));
  }

  /**
   * One alert, folded from its stream rather than read from the read model, so a GET right after
   * a create or PATCH sees it. Another project's alert is reported as missing.
   */
  async get(caller: Caller, alertId: string): Promise<AlertResource> {
    const { state } = await this.#load(alertId);
    if (state.status === 'initial' || state.alert.projectId !== caller.projectId)
      throw alertNotFound(alertId);
    return this.#resource(state, alertId);
  }

  /** GET /v1/alerts/disable: what the token would disable, without changing anything. */
  async inspectDisableToken(token: unknown): Promise<DisableTokenView> {
    const { alertId, tokenSha256 } = await this.#lookupToken(token);
    const { state } = await this.#load(alertId);
    return this.#tokenView(state, tokenSha256);
  }

  /** POST /v1/alerts/disable: the recipient's one click. Idempotent. */
  async disableByToken(token: unknown): Promise<DisableTokenView> {
    const { alertId, tokenSha256 } = await this.#lookupToken(token);
    const { state } = await this.#load(alertId);
    if (state.status === 'initial') throw unknownDisableToken();
    const after = await this.#execute(state.alert.organizationId, alertId, false, () => ({
      type: 'DisableAlertByRecipient',
      data: { alertId, tokenSha256, now: this.#deps.now() },
    }));
    return this.#tokenView(after, tokenSha256);
  }

  #tokenView(state: AlertState, tokenSha256: string): DisableTokenView {
    const token =
      state.status === 'initial'
        ? undefined
        : Object.values(state.alert.disableTokens).find((t) => t.tokenSha256 === tokenSha256);
    if (state.status === 'initial' || !token) throw unknownDisableToken();
    return {
      alert: { id: state.alert.id, title: state.alert.title, kind: state.alert.kind },
      email: token.email,
      status: state.status,
      is_active: state.status === 'active',
    };
  }

  async #lookupToken(token: unknown) {
    if (typeof token !== 'string' || !isWellFormedDisableToken(token)) {
      throw new BadRequestError('invalid_token', 'The token is missing or is not a disable token.', [
        { location: 'query.token', message: 'must be the token from an alert email', value: token },
      ]);
    }
    const tokenSha256 = hashDisableToken(token);
    const record = await findDisableToken(this.#deps.db, tokenSha256);
    if (!record) throw unknownDisableToken();
    return { alertId: record.alertId, tokenSha256 };
  }

  #resource(state: AlertState, alertId: string): AlertResource {
    if (state.status === 'initial' || state.status === 'deleted') throw alertNotFound(alertId);
    return alertResource(state.alert, state.status);
  }

  #issue(alertId: string, notifications: readonly Notification[]) {
    return referencesOf(notifications).emails.map((email) => this.#deps.tokens.issue(alertId, email));
  }

  async #references(
    caller: Caller,
    notifications: readonly Notification[],
    entity?: EntityRef,
  ): Promise<ReferenceFacts> {
    const { db, entities } = this.#deps;
    const { emails, webhookConnectionIds, chatConnectionIds } = referencesOf(notifications);
    const [resolved, verified, webhooks, chats] = await Promise.all([
      entity ? entities.resolve(entity) : Promise.resolve(undefined),
      emails.length ? verifiedEmails(db, caller.organizationId, emails) : Promise.resolve(new Set<string>()),
      liveWebhookConnections(db, caller.projectId, webhookConnectionIds),
      liveChatConnections(db, caller.projectId, chatConnectionIds),
    ]);
    const facts: ReferenceFacts = {
      unverifiedEmails: emails.filter((email) => !verified.has(email)),
      unusableWebhookConnections: webhookConnectionIds.filter((id) => !webhooks.has(id)),
      unusableChatConnections: chatConnectionIds.filter((id) => !chats.has(id)),
    };
    if (entity) facts.entity = resolved ?? null;
    return facts;
  }

  #load(alertId: string): Promise<Loaded<AlertState>> {
    return loadAlert(this.#deps.store, alertId);
  }

  async #plan(organizationId: string): Promise<{ plan: Plan; alertPacks: number }> {
    const { rows } = await this.#deps.db.query<{ plan: Plan; alert_packs: number }>(
      'select plan, alert_packs from organizations where id = $1::text',
      [organizationId],
    );
    if (!rows[0]) throw new NotFoundError('organization_not_found', `No organization ${organizationId}.`);
    return { plan: rows[0].plan, alertPacks: rows[0].alert_packs };
  }

  /**
   * Decide and append, keeping the organization's slot stream in step with the alert's
   * activity: a slot is taken before an alert becomes active and released after it stops.
   */
  #execute(
    organizationId: string,
    alertId: string,
    mayActivate: boolean,
    command: (state: AlertState, plan: PlanFacts) => AlertCommand,
  ): Promise<AlertState> {
    if (!mayActivate) return this.#attempt(organizationId, alertId, false, command);
    // Activations of one organization contend for the same slot stream: queue them in this
    // process, and leave the expected-revision retry for contention between processes.
    const previous = this.#activations.get(organizationId) ?? Promise.resolve();
    const run = previous.catch(() => {}).then(() => this.#attempt(organizationId, alertId, true, command));
    const tail = run.catch(() => {});
    this.#activations.set(organizationId, tail);
    void tail.then(() => {
      if (this.#activations.get(organizationId) === tail) this.#activations.delete(organizationId);
    });
    return run;
  }

  async #attempt(
    organizationId: string,
    alertId: string,
    mayActivate: boolean,
    command: (state: AlertState, plan: PlanFacts) => AlertCommand,
  ): Promise<AlertState> {
    const { store } = this.#deps;
    const maxAttempts = this.#deps.maxAttempts ?? 8;
    const plan = await this.#plan(organizationId);
    let slotTaken = false;
    try {
      for (let attempt = 1; ; attempt++) {
        const current = await this.#load(alertId);
        const quota = await this.#quotas.load(organizationId);
        let activeElsewhere = [...quota.state.keys()].filter((id) => id !== alertId).length;
        const allowance = activeAlertAllowance(plan.plan, plan.alertPacks);
        if (mayActivate && allowance !== null && activeElsewhere >= allowance) {
          activeElsewhere = await releaseStaleSlots(this.#deps, organizationId, quota.state, alertId);
        }
        const events = decide(
          command(current.state, { ...plan, activeAlerts: activeElsewhere }),
          current.state,
        );
        const next = foldAlert(events, current.state);
        const holdsSlot = quota.state.has(alertId);
        try {
          if (next.status === 'active' && !holdsSlot) {
            await takeSlot(this.#deps, organizationId, alertId, quota.revision);
            slotTaken = true;
          }
          if (events.length > 0) {
            await store.append(alertStream(alertId), toNew(events), { expectedRevision: current.revision });
          }
        } catch (error) {
          if (error instanceof WrongExpectedRevisionError && attempt < maxAttempts) {
            await backoff(attempt);
            continue;
          }
          if (error instanceof WrongExpectedRevisionError) {
            throw new ConflictError(
              'concurrent_modification',
              `Alert ${alertId} was changed concurrently ${maxAttempts} times in a row; retry the request.`,
              [],
              { cause: error },
            );
          }
          throw error;
        }
        if (next.status !== 'active' && (holdsSlot || slotTaken))
          await releaseSlot(this.#deps, organizationId, alertId);
        return next;
      }
    } catch (error) {
      // A slot taken in an attempt whose alert append then lost must not stay held.
      if (slotTaken) await reconcileSlot(this.#deps, organizationId, alertId);
      throw error;
    }
  }
}
