import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSnapshotInterval, snapshotWorker } from '../../src/advertising/snapshot-worker.ts';
import type { Runtime } from '../../src/runtime.ts';
import { createTestDb, type TestDb } from '../support/db.ts';

let t: TestDb;
beforeAll(async () => {
  t = await createTestDb();
});
afterAll(() => t.drop());

describe('leaderboard snapshot worker', () => {
  it('reads EARSHOT_SNAPSHOT_INTERVAL as a duration, 10 minutes by default, and refuses anything else', () => {
    expect(parseSnapshotInterval(undefined)).toBe(600_000);
    expect(parseSnapshotInterval('30s')).toBe(30_000);
    expect(parseSnapshotInterval('1s')).toBe(1000);
    expect(() => parseSnapshotInterval('soon')).toThrow(/EARSHOT_SNAPSHOT_INTERVAL/);
    expect(() => parseSnapshotInterval('0s')).toThrow(/EARSHOT_SNAPSHOT_INTERVAL/);
  });

  it('refreshes the three windows on the runtime clock, again every interval, under one leader', async () => {
    let now = new Date('2026-11-20T12:00:00Z');
    const runtime = { db: t.db, now: () => now, log: pino({ level: 'silent' }) } as unknown as Runtime;
    const controller = new AbortController();
    const workers = [snapshotWorker(runtime, 'projector', 50), snapshotWorker(runtime, 'projector', 50)];
    const running = workers.map((w) => w.run(controller.signal));
    const refreshed = async () =>
      (
        await t.db.query<{ window_name: string; refreshed_at: Date }>(
          'select * from ad_leaderboard_snapshots',
        )
      ).rows;
    for (let i = 0; i < 100 && (await refreshed()).length < 3; i++) await sleep(20);
    expect((await refreshed()).map((r) => r.window_name).sort()).toEqual([
      'all_time',
      'ending_30d_ago',
      'trailing_7d',
    ]);
    now = new Date('2026-11-21T12:00:00Z');
    const current = async () => (await refreshed()).every((r) => r.refreshed_at.getTime() === now.getTime());
    for (let i = 0; i < 100 && !(await current()); i++) await sleep(20);
    expect(await current()).toBe(true);
    controller.abort();
    await Promise.all(running);
  });
});
