import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toNewEvents } from '../../../src/delivery/decide.ts';
import { deliveryStream } from '../../../src/delivery/delivery.ts';
import { claimDeliveries } from '../../../src/delivery/queue/queue.ts';
import { createRecorder, type Recording } from '../../../src/delivery/queue/recorder.ts';
import type { EventStore } from '../../../src/eventstore/port.ts';
import { type DeliveryFixture, deliveryFixture } from '../support.ts';

describe('recording attempt outcomes', () => {
  let f: DeliveryFixture;
  beforeAll(async () => {
    f = await deliveryFixture();
  });
  afterAll(async () => {
    await f?.close();
  });

  /** Three fanned-out webhook deliveries, claimed by `owner`. */
  async function claimedDeliveries(owner: string) {
    const alert = await f.createAlert({
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: f.webhook.id }],
    });
    for (let i = 0; i < 3; i++) await f.match(alert.id);
    await f.fanOut();
    const claimed = await claimDeliveries(f.db, { owner, now: f.clock.now(), limit: 10, leaseMs: 60_000 });
    const ids = claimed.map((c) => c.deliveryId);
    expect(ids).toHaveLength(3);
    return ids;
  }

  const skipped = (deliveryId: string): Recording['append'] => ({
    streamId: deliveryStream(deliveryId),
    events: toNewEvents([
      {
        type: 'DeliverySkipped',
        data: { deliveryId, reason: 'recorded in a batch', skippedAt: f.clock.now().toISOString() },
      },
    ]),
    options: { expectedRevision: 0 },
  });

  const queueRows = async () =>
    (
      await f.db.query<{ delivery_id: string; lease_owner: string | null; due_at: Date; attempts: number }>(
        'select delivery_id, lease_owner, due_at, attempts from delivery_queue',
      )
    ).rows;

  it('appends the outcomes waiting together in one call, then settles their queue rows in one statement', async () => {
    const ids = await claimedDeliveries('batch');
    const calls: number[] = [];
    const store: EventStore = {
      ...f.store,
      appendMany: (appends) => {
        calls.push(appends.length);
        return f.store.appendMany(appends);
      },
    };
    const recorder = createRecorder({ db: f.db, store, log: f.runtime.log }, 'batch');
    const later = new Date(f.clock.now().getTime() + 60_000);
    const results = await Promise.all([
      recorder.record({ deliveryId: ids[0]!, append: skipped(ids[0]!), queue: { kind: 'complete' } }),
      recorder.record({ deliveryId: ids[1]!, append: skipped(ids[1]!), queue: { kind: 'complete' } }),
      recorder.record({ deliveryId: ids[2]!, queue: { kind: 'reschedule', dueAt: later, attempts: 2 } }),
    ]);
    await recorder.close();

    expect(results).toEqual(['recorded', 'recorded', 'recorded']);
    expect(calls).toEqual([2]);
    for (const id of ids.slice(0, 2)) {
      const events = await f.store.readStream(deliveryStream(id));
      expect(events.map((e) => e.type)).toEqual(['DeliveryCreated', 'DeliverySkipped']);
    }
    const rows = await queueRows();
    expect(rows.map((r) => r.delivery_id)).toEqual([ids[2]]);
    expect(rows[0]).toMatchObject({ lease_owner: null, due_at: later, attempts: 2 });
    await f.db.query('delete from delivery_queue');
  });

  it('records the rest of a batch when another deliverer appended to one of its deliveries first', async () => {
    const ids = await claimedDeliveries('slow');
    // A process whose lease outlived ours recorded an attempt of the second delivery.
    await f.store.append(
      deliveryStream(ids[1]!),
      [
        {
          id: `other-${ids[1]}`,
          type: 'DeliveryAttemptFailed',
          data: {
            deliveryId: ids[1],
            attempt: 1,
            attemptedAt: f.clock.now().toISOString(),
            durationMs: 5,
            error: 'HTTP 503',
            retryable: true,
            nextAttemptAt: new Date(f.clock.now().getTime() + 5_000).toISOString(),
          },
        },
      ],
      { expectedRevision: 0 },
    );
    const recorder = createRecorder({ db: f.db, store: f.store, log: f.runtime.log }, 'slow');
    const results = await Promise.all(
      ids.map((id) => recorder.record({ deliveryId: id, append: skipped(id), queue: { kind: 'complete' } })),
    );
    await recorder.close();

    expect(results).toEqual(['recorded', 'lost', 'recorded']);
    const types = await Promise.all(
      ids.map(async (id) => (await f.store.readStream(deliveryStream(id))).map((e) => e.type)),
    );
    expect(types).toEqual([
      ['DeliveryCreated', 'DeliverySkipped'],
      ['DeliveryCreated', 'DeliveryAttemptFailed'],
      ['DeliveryCreated', 'DeliverySkipped'],
    ]);
    // The lost delivery's row stays, its lease given back; the others are gone.
    expect(await queueRows()).toEqual([expect.objectContaining({ delivery_id: ids[1], lease_owner: null })]);
  });
});
