import type { EntityUpserted } from '../../ingestion/events.ts';
import type { WatchedAlert } from '../types.ts';
import { AlertIndex } from './alert-index.ts';
import { PhraseDetector } from './phrase-detector.ts';

/**
 * Keeps the alert index and the detector in step: the detector holds the names and aliases of
 * exactly the entities that have at least one active alert. It remembers every upserted entity's
 * names (only the names), so an alert created later for an entity starts detecting at once.
 */
export class Watchlist {
  readonly index = new AlertIndex();
  readonly detector = new PhraseDetector();
  private readonly names = new Map<string, string[]>();

  upsertEntity(entity: Pick<EntityUpserted['entity'], 'id' | 'name' | 'aliases'>): void {
    const names = [entity.name, ...(entity.aliases ?? [])];
    this.names.set(entity.id, names);
    if (this.index.isWatched(entity.id)) this.detector.setNames(entity.id, names);
  }

  /** Adds or updates an active alert. */
  putAlert(alert: WatchedAlert): void {
    this.apply(this.index.put(alert));
  }

  /** Removes a paused or deleted alert. */
  removeAlert(alertId: string): void {
    this.apply(this.index.remove(alertId));
  }

  namesOf(entityId: string): readonly string[] {
    return this.names.get(entityId) ?? [];
  }

  private apply(change: { watched: string[]; unwatched: string[] }): void {
    for (const entityId of change.unwatched) this.detector.removeEntity(entityId);
    for (const entityId of change.watched) this.detector.setNames(entityId, this.names.get(entityId) ?? []);
  }
}

/** An index and detector for one alert alone: for an alert's creation-time backfill and previews. */
export function singleAlertWatch(
  alert: WatchedAlert,
  names: readonly string[],
): { index: AlertIndex; detector: PhraseDetector } {
  const index = new AlertIndex();
  index.put(alert);
  const detector = new PhraseDetector();
  detector.setNames(alert.entityId, names);
  return { index, detector };
}
