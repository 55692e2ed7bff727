import { describe, expect, it } from 'vitest';
import { readSnapshot, writeSnapshot } from '../../../consumers/matcher/snapshot.ts';
import { slimState } from '../../../src/matching/engine/live-watchlist.ts';
import { createDb, ENGINES } from '../../support/db.ts';

describe.each(ENGINES)('matcher snapshot round trip on %s', (engine) => {
  it('keeps names with quotes, backslashes, braces, commas, unicode and empty strings', async () => {
    const { db, drop } = await createDb(engine);
    try {
      const names = ['Ben "the \\ man"', '{a,b}', 'NULL', '', 'Zoë 🎙', "O'Hara", 'a\nb', '\\u0000x'];
      const entries = [
        { kind: 'entity' as const, key: 'e,1"', at: 1732100000000.5, value: { names } },
        { kind: 'show' as const, key: 'NULL', at: -1, value: { language: 'pt-BR' } },
      ];
      // What the matcher keeps of an alert: its status and the fields it matches with.
      const alertId = 'alert "1",\\';
      const alert = {
        alertId,
        revision: 7,
        createdAt: '12/3',
        state: slimState(alertId, {
          status: 'paused',
          projectId: 'p',
          organizationId: 'o',
          kind: 'ENTITY_MENTION',
          deliveryCadence: 'REALTIME',
          entity: { entityType: 'PERSON', entityId: names[0]! },
          filters: { languages: ['pt-BR'], speakerRoles: ['GUEST'] },
        }),
      };
      expect(
        await writeSnapshot(db, { from: undefined, position: 'p1', replace: true, entries, alerts: [alert] }),
      ).toBe(true);
      const snap = await readSnapshot(db);
      expect(snap?.position).toBe('p1');
      expect(snap?.entries.sort((a, b) => a.kind.localeCompare(b.kind))).toEqual(entries);
      expect(snap?.alertsPosition).toBe('p1');
      expect(snap?.alerts).toEqual([alert]);
    } finally {
      await drop();
    }
  });

  it('reads a snapshot whose alerts were never written (written before migration 0256) as having none', async () => {
    const { db, drop } = await createDb(engine);
    try {
      await db.query("insert into matcher_snapshot (name, position) values ('matcher', '5/5')");
      await db.query(
        `insert into matcher_snapshot_alerts (alert_id, revision, created_position, kept)
         values ('stale', 0, '1/1', '{"status":"active"}')`,
      );
      expect(await readSnapshot(db)).toEqual({
        position: '5/5',
        entries: [],
        alertsPosition: undefined,
        alerts: [],
      });
    } finally {
      await drop();
    }
  });
});
