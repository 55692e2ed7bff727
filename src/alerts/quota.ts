import type { EventStore, ExpectedRevision } from '../eventstore/port.ts';
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
export type QuotaSlots = Map<string, string>;

export function evolveQuota(slots: ReadonlyMap<string, string>, event: AlertQuotaEvent): QuotaSlots {
  const next = new Map(slots);
  switch (event.type) {
    case 'AlertSlotTaken':
      next.set(event.data.alertId, event.data.takenAt);
      return next;
    case 'AlertSlotReleased':
      next.delete(event.data.alertId);
      return next;
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

export async function loadQuota(
  store: Pick<EventStore, 'readStream'>,
  organizationId: string,
): Promise<{ state: QuotaSlots; revision: ExpectedRevision }> {
  const events = await store.readStream(alertQuotaStream(organizationId));
  return {
    state: events.reduce(
      (slots, event) => evolveQuota(slots, { type: event.type, data: event.data } as AlertQuotaEvent),
      new Map<string, string>(),
    ),
    revision: events.length === 0 ? 'no_stream' : events.at(-1)!.revision,
  };
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
