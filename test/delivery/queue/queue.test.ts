import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../../src/db/db.ts';
import {
  claimDeliveries,
  completeDelivery,
  enqueueDeliveries,
  nextDueAt,
  settleDeliveries,
  withdrawDelivery,
} from '../../../src/delivery/queue/queue.ts';
import { createDb, ENGINES } from '../../support/db.ts';

describe.each(ENGINES)('delivery queue on %s', (engine) => {
  let db: Db;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ db, drop } = await createDb(engine));
  });
  afterAll(async () => {
    await drop?.();
  });
  const now = new Date('2026-11-20T10:00:00Z');
  const claim = async (owner: string, limit = 10) =>
    (await claimDeliveries(db, { owner, now, limit, leaseMs: 60_000 })).map((c) => c.deliveryId).sort();
  const reschedule = (owner: string, deliveryId: string, dueAt: Date, crashes?: number) =>
    settleDeliveries(db, owner, {
      complete: [],
      reschedule: [{ deliveryId, dueAt, attempts: 1, ...(crashes !== undefined && { crashes }) }],
      release: [],
    });

  it('hands each due delivery to one claimer at a time and takes it back when the lease runs out', async () => {
    await enqueueDeliveries(db, [
      { deliveryId: 'a', dueAt: now, organizationId: 'org' },
      { deliveryId: 'b', dueAt: now, organizationId: 'org' },
      { deliveryId: 'later', dueAt: new Date(now.getTime() + 60_000), organizationId: 'org' },
    ]);
    await enqueueDeliveries(db, [{ deliveryId: 'a', dueAt: new Date(0), organizationId: 'org' }]); // already queued: kept as is
    const [first, second] = await Promise.all([claim('one'), claim('two')]);
    expect([...first!, ...second!].sort()).toEqual(['a', 'b']);
    expect(await claim('three')).toEqual([]);

    await db.query(
      `update delivery_queue set lease_until = clock_timestamp() - interval '1 second' where delivery_id = 'a'`,
    );
    expect(await claim('three')).toEqual(['a']);
  });

  it('reschedules only for the holder, withdraws only what nobody holds, and completes', async () => {
    await reschedule('not-the-holder', 'a', new Date(now.getTime() + 5_000));
    expect(await withdrawDelivery(db, 'a')).toBe(false); // 'three' holds it
    await reschedule('three', 'a', new Date(now.getTime() + 5_000));
    expect(await claim('four')).toEqual([]);
    expect((await nextDueAt(db))?.toISOString()).toBe('2026-11-20T10:00:05.000Z');
    expect(await withdrawDelivery(db, 'a')).toBe(true);
    expect(await withdrawDelivery(db, 'never-queued')).toBe(true);
    await completeDelivery(db, 'b');
    const { rows } = await db.query<{ delivery_id: string }>(
      'select delivery_id from delivery_queue order by 1',
    );
    expect(rows.map((r) => r.delivery_id)).toEqual(['later']);
  });

  it('hands out the crashes a reschedule records, and counts them again from 0 after any other reschedule', async () => {
    await db.query('delete from delivery_queue');
    await enqueueDeliveries(db, [{ deliveryId: 'x', dueAt: now, organizationId: 'org' }]);
    const claimX = (owner: string) => claimDeliveries(db, { owner, now, limit: 10, leaseMs: 60_000 });
    expect(await claimX('one')).toEqual([{ deliveryId: 'x', crashes: 0 }]);
    await reschedule('one', 'x', now, 2);
    expect(await claimX('two')).toEqual([{ deliveryId: 'x', crashes: 2 }]);
    await reschedule('not-the-holder', 'x', now, 5);
    await reschedule('two', 'x', now);
    expect(await claimX('three')).toEqual([{ deliveryId: 'x', crashes: 0 }]);
  });

  it('takes turns between organizations, so a backlog of one does not hold back a newer delivery of another', async () => {
    await db.query('delete from delivery_queue');
    const at = (seconds: number) => new Date(now.getTime() + seconds * 1000);
    await enqueueDeliveries(db, [
      ...Array.from({ length: 10 }, (_, i) => ({
        deliveryId: `a${i}`,
        dueAt: at(-100 + i),
        organizationId: 'org-a',
      })),
      { deliveryId: 'b0', dueAt: at(0), organizationId: 'org-b' },
      { deliveryId: 'c0', dueAt: at(-50), organizationId: 'org-c' },
      { deliveryId: 'c1', dueAt: at(-49), organizationId: 'org-c' },
      { deliveryId: 'c-later', dueAt: at(60), organizationId: 'org-c' },
    ]);
    // Each organization's oldest, oldest first, then each one's second: a1 is older than c1.
    expect(await claim('one', 4)).toEqual(['a0', 'a1', 'b0', 'c0']);
    // Rows held by a claimer are skipped; with only org-a left, its oldest rows in order.
    expect(await claim('two', 3)).toEqual(['a2', 'a3', 'c1']);
    expect(await claim('three', 3)).toEqual(['a4', 'a5', 'a6']);
    expect(await claim('four', 10)).toEqual(['a7', 'a8', 'a9']);
  });
});
