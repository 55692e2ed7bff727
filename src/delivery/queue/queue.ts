import type { Queryable } from '../../db/db.ts';

/** NOTIFY channel: new or rescheduled work in delivery_queue. */
export const QUEUE_CHANNEL = 'earshot_delivery_queue';

export interface QueuedDelivery {
  deliveryId: string;
  dueAt: Date;
  /** The delivery's alert's organization: claims take turns between organizations. */
  organizationId: string;
}

/** Adds deliveries to the queue; one already queued keeps its row. */
export async function enqueueDeliveries(q: Queryable, items: readonly QueuedDelivery[]): Promise<void> {
  if (items.length === 0) return;
  await q.query(
    `insert into delivery_queue (delivery_id, due_at, organization_id)
     select * from unnest($1::text[], $2::timestamptz[], $3::text[])
     on conflict (delivery_id) do nothing`,
    [
      items.map((item) => item.deliveryId),
      items.map((item) => item.dueAt.toISOString()),
      items.map((item) => item.organizationId),
    ],
  );
}

export interface ClaimedDelivery {
  deliveryId: string;
  /** Attempts of it that crashed in a row since its last recorded outcome (docs/delivery.md, Crashed attempts). */
  crashes: number;
}

/**
 * Leases up to `limit` due deliveries that nobody holds, taking turns between organizations
 * (docs/delivery.md, Claiming): each organization with a claimable row gets its oldest one, then
 * each its second, and so on, oldest first within a turn; with one organization this is simply its
 * oldest rows. So one organization's backlog waits behind another's newer delivery for at most one
 * claim, not for the whole backlog. The organizations are walked one index probe each (a loose
 * index scan), the rows chosen are read without locks, and only the ones taken are locked, with
 * SKIP LOCKED so several processes claim at once without waiting on each other or taking the same
 * row; a lease that runs out (its holder died) makes the row claimable again. Leases run on the
 * database's clock, shared by all processes.
 */
export async function claimDeliveries(
  q: Queryable,
  options: { owner: string; now: Date; limit: number; leaseMs: number },
): Promise<ClaimedDelivery[]> {
  const { rows } = await q.query<{ delivery_id: string; crashes: number }>(
    `with recursive organizations (organization_id) as (
         (select organization_id from delivery_queue order by organization_id limit 1)
       union all
         select (select q.organization_id from delivery_queue q
                  where q.organization_id > o.organization_id
                  order by q.organization_id limit 1)
           from organizations o
          where o.organization_id is not null
     ), waiting as (
       select o.organization_id, oldest.due_at
         from organizations o
         cross join lateral (
           select due_at from delivery_queue
            where organization_id = o.organization_id and due_at <= $2::timestamptz
              and (lease_until is null or lease_until < clock_timestamp())
            order by due_at limit 1) oldest
        where o.organization_id is not null
        order by oldest.due_at
        limit $3::int
     ), turns as (
       select c.delivery_id, c.due_at,
              row_number() over (partition by w.organization_id order by c.due_at, c.delivery_id) as turn
         from waiting w
         cross join lateral (
           select delivery_id, due_at from delivery_queue
            where organization_id = w.organization_id and due_at <= $2::timestamptz
              and (lease_until is null or lease_until < clock_timestamp())
            order by due_at limit $3::int) c
     ), chosen as (
       -- twice the rows wanted, so rows another claimer takes meanwhile are made up for
       select delivery_id, turn, due_at from turns order by turn, due_at, delivery_id limit 2 * $3::int
     )
     update delivery_queue q
        set lease_owner = $1::text, lease_until = clock_timestamp() + $4::int * interval '1 millisecond'
      where q.delivery_id in (
        select d.delivery_id from chosen c join delivery_queue d on d.delivery_id = c.delivery_id
         where d.due_at <= $2::timestamptz and (d.lease_until is null or d.lease_until < clock_timestamp())
         order by c.turn, c.due_at, c.delivery_id
         limit $3::int
         for update of d skip locked)
      returning q.delivery_id, q.crashes`,
    [options.owner, options.now.toISOString(), options.limit, options.leaseMs],
  );
  return rows.map((row) => ({ deliveryId: row.delivery_id, crashes: row.crashes }));
}

/** Keeps the holder's leases alive while it works. */
export async function extendLeases(q: Queryable, owner: string, ids: readonly string[], leaseMs: number) {
  if (ids.length === 0) return;
  await q.query(
    `update delivery_queue set lease_until = clock_timestamp() + $3::int * interval '1 millisecond'
      where lease_owner = $1::text and delivery_id = any($2::text[])`,
    [owner, ids, leaseMs],
  );
}

export interface QueueSettlement {
  /** Nothing left to attempt: the rows go. */
  complete: readonly string[];
  /**
   * Next attempt at `dueAt`; the lease is given up. Only the holder's rows change. `crashes`: the
   * crashes in a row after a crashed attempt; otherwise the count starts again at 0.
   */
  reschedule: ReadonlyArray<{ deliveryId: string; dueAt: Date; attempts?: number; crashes?: number }>;
  /** Leases given back untouched (another process recorded the delivery first). */
  release: readonly string[];
}

/**
 * Settles the queue rows of many finished attempts in one statement. Each delivery id appears in
 * at most one of the lists (a row modified twice in one statement is undefined behaviour).
 */
export async function settleDeliveries(q: Queryable, owner: string, settlement: QueueSettlement) {
  const { complete, reschedule, release } = settlement;
  if (complete.length + reschedule.length + release.length === 0) return;
  await q.query(
    `with done as (
       delete from delivery_queue where delivery_id = any($1::text[])
     ), later as (
       update delivery_queue q
          set due_at = r.due_at, attempts = coalesce(r.attempts, q.attempts), crashes = coalesce(r.crashes, 0),
              lease_owner = null, lease_until = null
         from unnest($2::text[], $3::timestamptz[], $4::int[], $7::int[]) as r(delivery_id, due_at, attempts, crashes)
        where q.delivery_id = r.delivery_id and q.lease_owner = $6::text
     ), released as (
       update delivery_queue set lease_owner = null, lease_until = null
        where delivery_id = any($5::text[]) and lease_owner = $6::text
     )
     select 1`,
    [
      complete,
      reschedule.map((r) => r.deliveryId),
      reschedule.map((r) => r.dueAt.toISOString()),
      reschedule.map((r) => r.attempts ?? null),
      release,
      owner,
      reschedule.map((r) => r.crashes ?? null),
    ],
  );
}

/** The delivery has nothing left to attempt. */
export async function completeDelivery(q: Queryable, id: string) {
  await q.query('delete from delivery_queue where delivery_id = $1::text', [id]);
}

/**
 * Takes a queued delivery away from the workers, unless one holds it now. True when it is no
 * longer queued (taken or never there), false when a worker is on it.
 */
export async function withdrawDelivery(q: Queryable, id: string): Promise<boolean> {
  const { rows } = await q.query<{ held: boolean }>(
    `with gone as (
       delete from delivery_queue
        where delivery_id = $1::text and (lease_until is null or lease_until < clock_timestamp())
        returning 1)
     select exists (select 1 from delivery_queue where delivery_id = $1::text and not exists (select 1 from gone)) as held`,
    [id],
  );
  return !rows[0]?.held;
}

/** When the earliest unleased row falls due (to sleep until then). */
export async function nextDueAt(q: Queryable): Promise<Date | null> {
  const { rows } = await q.query<{ due_at: Date | null }>(
    'select min(due_at) as due_at from delivery_queue where lease_until is null or lease_until < clock_timestamp()',
  );
  return rows[0]?.due_at ?? null;
}
