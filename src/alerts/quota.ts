import { ByteLru } from '../byte-lru.ts';
import type { EventStore, ExpectedRevision, RecordedEvent } from '../eventstore/port.ts';
import { loadAlert } from './alert.ts';

/**
 * The active-alert allowance spans every alert of an organization, so it cannot be guarded by one
 * alert's stream. This per-organization stream is the consistency boundary: an alert takes a
 * slot (expected-revision append) before it becomes active and gives it back after it stops
 * being active. Two concurrent activations at the limit cannot both take the last slot.
 *
 * A crash between the two appends can leave a slot held by an alert that is not active; such
 * slots are found and released when the organization reaches its limit (`releaseStaleSlots`), so
 * the allowance is never permanently lost. The alert command handler (service.ts) runs the two
 * appends; the steps of this saga are here.
 */
// Not "alert-…": that prefix is alertStream's, and an alert id comes from a URL.
export const alertQuotaStream = (organizationId: string) => `quota-${organizationId}`;

export interface AlertSlotTaken {
  type: 'AlertSlotTaken';
  data: { organizationId: string; alertId: string; takenAt: string };
}
export interface AlertSlotReleased {
  type: 'AlertSlotReleased';
  data: { organizationId: string; alertId: string; releasedAt: string };
}
export type AlertQuotaEvent = AlertSlotTaken | AlertSlotReleased;

/** The slots held: alert id → when its slot was taken. */
export type QuotaSlots = ReadonlyMap<string, string>;

/** One event applied to the slots in place. */
function applyQuota(slots: Map<string, string>, event: AlertQuotaEvent) {
  switch (event.type) {
    case 'AlertSlotTaken':
      slots.set(event.data.alertId, event.data.takenAt);
      return;
    case 'AlertSlotReleased':
      slots.delete(event.data.alertId);
      return;
    default: {
      const unhandled: never = event;
      return unhandled;
    }
  }
}

/** How long a slot taken for an alert with no events yet counts as a request in flight. */
const IN_FLIGHT_MS = 60_000;

export interface QuotaDeps {
  store: EventStore;
  now(): Date;
}

/** An organization's slots as of a revision of its quota stream. */
export interface LoadedQuota {
  state: QuotaSlots;
  revision: ExpectedRevision;
}

/** Organizations' slots kept per process, in bytes (a slot: two short strings and a map entry). */
const QUOTA_CACHE_BYTES = 8 * 1024 * 1024;
const SLOT_BYTES = 160;
const ENTRY_BYTES = 256;

/** Slots as read, with the id of the event they were last read to. */
type Kept = LoadedQuota & { lastEventId?: string };
const revisionOf = (quota: LoadedQuota | undefined) =>
  typeof quota?.revision === 'number' ? quota.revision : -1;

/**
 * Reads organizations' quota streams (docs/alerts.md, "Allowance and concurrency"). The slots last
 * read are kept per process, so a load reads only the events appended since: a stream gains an
 * event for every activation, and reading all of it for each one made an organization's creations
 * slower with every active alert it had.
 */
export class QuotaReader {
  readonly #loaded = new ByteLru<Kept>(QUOTA_CACHE_BYTES);

  constructor(private readonly store: Pick<EventStore, 'readStream'>) {}

  async load(organizationId: string): Promise<LoadedQuota> {
    const stream = alertQuotaStream(organizationId);
    let known = this.#loaded.get(organizationId);
    let events: RecordedEvent[] | undefined;
    if (known?.lastEventId !== undefined) {
      // From the event last read, which must still be there: a stream is only appended to, but a
      // store restored from a backup or rebuilt may hold another history, and then it is read whole.
      const tail = await this.store.readStream(stream, { fromRevision: revisionOf(known) });
      if (tail[0]?.id === known.lastEventId) events = tail.slice(1);
    }
    if (!events) {
      if (known) this.#loaded.delete(organizationId);
      known = undefined;
      events = await this.store.readStream(stream);
    }
    if (known && events.length === 0) return known;
    const slots = new Map(known?.state);
    for (const event of events) applyQuota(slots, { type: event.type, data: event.data } as AlertQuotaEvent);
    const last = events.at(-1);
    const loaded: Kept = last
      ? { state: slots, revision: last.revision, lastEventId: last.id }
      : { state: slots, revision: 'no_stream' };
    // Loads of one organization may overlap: the later revision stays.
    if (revisionOf(this.#loaded.get(organizationId)) <= revisionOf(loaded))
      this.#loaded.set(organizationId, loaded, ENTRY_BYTES + SLOT_BYTES * slots.size);
    return loaded;
  }
}

/** Takes a slot before the alert becomes active; a concurrent taker makes it a WrongExpectedRevisionError. */
export async function takeSlot(
  deps: QuotaDeps,
  organizationId: string,
  alertId: string,
  expectedRevision: ExpectedRevision,
) {
  const taken: AlertSlotTaken = {
    type: 'AlertSlotTaken',
    data: { organizationId, alertId, takenAt: deps.now().toISOString() },
  };
  await deps.store.append(alertQuotaStream(organizationId), [{ type: taken.type, data: taken.data }], {
    expectedRevision,
  });
}

export async function releaseSlot(deps: QuotaDeps, organizationId: string, alertId: string) {
  const released: AlertSlotReleased = {
    type: 'AlertSlotReleased',
    data: { organizationId, alertId, releasedAt: deps.now().toISOString() },
  };
  await deps.store.append(alertQuotaStream(organizationId), [{ type: released.type, data: released.data }], {
    expectedRevision: 'any',
  });
}

/** Gives back the slot of an alert whose stream says it is not active. */
export async function reconcileSlot(deps: QuotaDeps, organizationId: string, alertId: string) {
  const { state } = await loadAlert(deps.store, alertId);
  if (state.status !== 'active') await releaseSlot(deps, organizationId, alertId);
}

/** At the limit: releases slots whose alert is not active (left by a crash); returns the true count. */
export async function releaseStaleSlots(
  deps: QuotaDeps,
  organizationId: string,
  slots: ReadonlyMap<string, string>,
  except: string,
): Promise<number> {
  let active = 0;
  for (const [id, takenAt] of slots) {
    if (id === except) continue;
    const { state } = await loadAlert(deps.store, id);
    // A slot whose alert has no events yet is a create or resume in flight in another process,
    // unless it is older than any request: then that process died between its two appends.
    const inFlight = state.status === 'initial' && deps.now().getTime() - Date.parse(takenAt) < IN_FLIGHT_MS;
    if (state.status === 'active' || inFlight) active++;
    else await releaseSlot(deps, organizationId, id);
  }
  return active;
}
