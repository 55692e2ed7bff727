import type { WatchedAlert } from '../types.ts';

/**
 * Active alerts by watched entity, maintained incrementally, so an episode's alerts are found by
 * looking up the entities it involves and never by scanning every alert.
 */
export class AlertIndex {
  private readonly byEntity = new Map<string, Map<string, WatchedAlert>>();
  private readonly entityOfAlert = new Map<string, string>();

  get alertCount(): number {
    return this.entityOfAlert.size;
  }

  get entityCount(): number {
    return this.byEntity.size;
  }

  /**
   * Adds or replaces an active alert (its entity may have changed). Returns the entities whose
   * watched status changed: `watched` gained their first alert, `unwatched` lost their last one.
   */
  put(alert: WatchedAlert): { watched: string[]; unwatched: string[] } {
    const change = this.remove(alert.alertId);
    let alerts = this.byEntity.get(alert.entityId);
    if (alerts === undefined) {
      alerts = new Map();
      this.byEntity.set(alert.entityId, alerts);
      const regained = change.unwatched.indexOf(alert.entityId);
      if (regained >= 0) change.unwatched.splice(regained, 1);
      else change.watched.push(alert.entityId);
    }
    alerts.set(alert.alertId, alert);
    this.entityOfAlert.set(alert.alertId, alert.entityId);
    return change;
  }

  /** Removes a paused or deleted alert; unknown ids are a no-op. */
  remove(alertId: string): { watched: string[]; unwatched: string[] } {
    const entityId = this.entityOfAlert.get(alertId);
    if (entityId === undefined) return { watched: [], unwatched: [] };
    this.entityOfAlert.delete(alertId);
    const alerts = this.byEntity.get(entityId)!;
    alerts.delete(alertId);
    if (alerts.size > 0) return { watched: [], unwatched: [] };
    this.byEntity.delete(entityId);
    return { watched: [], unwatched: [entityId] };
  }

  get(alertId: string): WatchedAlert | undefined {
    const entityId = this.entityOfAlert.get(alertId);
    return entityId === undefined ? undefined : this.byEntity.get(entityId)?.get(alertId);
  }

  isWatched(entityId: string): boolean {
    return this.byEntity.has(entityId);
  }

  alertsFor(entityId: string): Iterable<WatchedAlert> {
    return this.byEntity.get(entityId)?.values() ?? [];
  }

  watchedEntities(): Iterable<string> {
    return this.byEntity.keys();
  }
}
