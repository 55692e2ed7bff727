/**
 * The active-alert allowance spans every alert of an organization, so it cannot be guarded by one
 * alert's stream. This per-organization stream is the consistency boundary: an alert takes a
 * slot (expected-revision append) before it becomes active and gives it back after it stops
 * being active. Two concurrent activations at the limit cannot both take the last slot.
 *
 * A crash between the two appends can leave a slot held by an alert that is not active; such
 * slots are found and released when the organization reaches its limit (see service.ts), so the
 * allowance is never permanently lost.
 */
// Not "alert-…": that prefix is alertStream's, and an alert id comes from a URL.
export const alertQuotaStream = (organizationId: string) => `quota-${organizationId}`;

export type AlertQuotaEvent =
  | { type: 'AlertSlotTaken'; data: { organizationId: string; alertId: string; takenAt: string } }
  | { type: 'AlertSlotReleased'; data: { organizationId: string; alertId: string; releasedAt: string } };

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
