import {
  ALERT_EVENT_TYPES,
  type Alert,
  type AlertState,
  evolve,
  initialAlertState,
  toAlertEvent,
} from '../../alerts/alert.ts';
import type { RecordedEvent } from '../../eventstore/port.ts';
import type { EntityUpserted } from '../../ingestion/events.ts';
import type { WatchedAlert } from '../types.ts';
import { Watchlist } from './watchlist.ts';

/** The events that change what the matcher watches. */
export const WATCHLIST_EVENT_TYPES: readonly string[] = [...ALERT_EVENT_TYPES, 'EntityUpserted'];

const ALERT_TYPES: ReadonlySet<string> = new Set(ALERT_EVENT_TYPES);

/** What the matcher keeps of an alert: enough to fold its next events and to watch it. */
export interface FollowedAlert {
  /** The decider's state after `revision`, slimmed to what matching needs. */
  state: Exclude<AlertState, { status: 'initial' }>;
  revision: number;
  /** Position of the AlertCreated event. */
  createdAt: string;
}

/** The matcher's view of an alert: filters in the engine's (wire) names. */
export function watchedAlertOf(
  alert: Pick<Alert, 'id' | 'projectId' | 'organizationId' | 'kind' | 'entity' | 'filters'>,
): WatchedAlert {
  const { languages, relevance, sourcePopularity, speakerRoles } = alert.filters;
  return {
    alertId: alert.id,
    projectId: alert.projectId,
    organizationId: alert.organizationId,
    kind: alert.kind,
    entityId: alert.entity.entityId,
    entityType: alert.entity.entityType,
    filters: {
      ...(languages?.length ? { languages } : {}),
      ...(relevance ? { relevance } : {}),
      ...(sourcePopularity?.length ? { sourcePopularity } : {}),
      ...(speakerRoles?.length ? { speakerRoles } : {}),
    },
  };
}

/**
 * A Watchlist kept up to date from alert and entity events, applied in store order. Alerts are
 * folded with the alerts decider's own evolve (so "active" means what it means there); only
 * active alerts are watched. Replayed events (a stream revision already folded, an entity version
 * older than the one held) change nothing.
 */
export class LiveWatchlist {
  readonly watchlist = new Watchlist();
  private readonly alerts = new Map<string, FollowedAlert>();
  private readonly entityVersions = new Map<string, number>();

  get index() {
    return this.watchlist.index;
  }

  get detector() {
    return this.watchlist.detector;
  }

  /** True for the event types this watchlist follows. */
  follows(type: string): boolean {
    return type === 'EntityUpserted' || ALERT_TYPES.has(type);
  }

  apply(event: RecordedEvent): void {
    if (event.type === 'EntityUpserted') this.applyEntity(event.data as EntityUpserted);
    else if (ALERT_TYPES.has(event.type)) this.applyAlert(event);
  }

  /** The entity's names (name, then aliases) and the occurred_at (epoch ms) of their version. */
  entity(entityId: string): { names: readonly string[]; at: number } | undefined {
    const at = this.entityVersions.get(entityId);
    return at === undefined ? undefined : { names: this.watchlist.namesOf(entityId), at };
  }

  *entities(): IterableIterator<[string, { names: readonly string[]; at: number }]> {
    for (const [entityId, at] of this.entityVersions)
      yield [entityId, { names: this.watchlist.namesOf(entityId), at }];
  }

  /** Puts back an entity read from a snapshot, as if its version had been applied. */
  restoreEntity(entityId: string, entry: { names: readonly string[]; at: number }): void {
    const [name = '', ...aliases] = entry.names;
    this.entityVersions.set(entityId, entry.at);
    this.watchlist.upsertEntity({ id: entityId, name, aliases });
  }

  /** What is held for the alert, when it is known. */
  alert(alertId: string): FollowedAlert | undefined {
    return this.alerts.get(alertId);
  }

  alertEntries(): IterableIterator<[string, FollowedAlert]> {
    return this.alerts.entries();
  }

  /** Puts back an alert read from a snapshot, as if its events up to `revision` had been applied. */
  restoreAlert(alertId: string, followed: FollowedAlert): void {
    this.follow(alertId, followed);
  }

  /** Position of the alert's AlertCreated, when the alert is known. */
  createdPositionOf(alertId: string): string | undefined {
    return this.alerts.get(alertId)?.createdAt;
  }

  private applyEntity(data: EntityUpserted): void {
    const seen = this.entityVersions.get(data.entity.id);
    const version = Date.parse(data.occurred_at);
    if (seen !== undefined && seen > version) return;
    this.entityVersions.set(data.entity.id, version);
    this.watchlist.upsertEntity(data.entity);
  }

  private applyAlert(event: RecordedEvent): void {
    const alertEvent = toAlertEvent(event);
    const alertId = alertEvent.data.alertId;
    const followed = this.alerts.get(alertId);
    if (followed && event.revision <= followed.revision) return;
    const state = evolve(followed?.state ?? initialAlertState(), alertEvent);
    if (state.status === 'initial') return;
    this.follow(alertId, {
      state: slim(state),
      revision: event.revision,
      createdAt: event.type === 'AlertCreated' ? event.position : (followed?.createdAt ?? event.position),
    });
  }

  private follow(alertId: string, followed: FollowedAlert): void {
    this.alerts.set(alertId, followed);
    if (followed.state.status === 'active') this.watchlist.putAlert(watchedAlertOf(followed.state.alert));
    else this.watchlist.removeAlert(alertId);
  }
}

/**
 * What the matcher keeps of an alert besides its id: what watchedAlertOf reads, and the delivery
 * cadence. The rest of the decider's state (texts, recipients, tokens, timestamps) it never reads.
 */
export type KeptAlert = { status: FollowedAlert['state']['status'] } & Pick<
  Alert,
  'projectId' | 'organizationId' | 'kind' | 'deliveryCadence' | 'entity' | 'filters'
>;

export function keptOf({ status, alert }: FollowedAlert['state']): KeptAlert {
  const { projectId, organizationId, kind, deliveryCadence, entity, filters } = alert;
  return { status, projectId, organizationId, kind, deliveryCadence, entity, filters };
}

/**
 * The state the matcher holds for what it keeps: a decider state with everything else blank, so
 * the alert's next events fold onto it as onto the whole state, and slim(state) depends on the
 * kept fields alone (a snapshot round trip gives back the same state).
 */
export function slimState(alertId: string, kept: KeptAlert): FollowedAlert['state'] {
  // Spelled out: object rest and spread cost several times more, 100,000 times on a restart.
  return {
    status: kept.status,
    alert: {
      id: alertId,
      projectId: kept.projectId,
      organizationId: kept.organizationId,
      kind: kept.kind,
      deliveryCadence: kept.deliveryCadence,
      entity: kept.entity,
      filters: kept.filters,
      title: '',
      description: null,
      notifications: [],
      disableTokens: {},
      createdAt: '',
      updatedAt: '',
      pausedAt: null,
      disabledAt: null,
      disabledBy: null,
      deletedAt: null,
    },
  };
}

/** Only what matching needs stays in memory (100,000 alerts). */
const slim = (state: Exclude<AlertState, { status: 'initial' }>) => slimState(state.alert.id, keptOf(state));
