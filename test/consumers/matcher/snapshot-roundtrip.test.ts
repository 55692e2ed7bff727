import { describe, expect, it } from 'vitest';
import { readSnapshot, writeSnapshot } from '../../../consumers/matcher/snapshot.ts';
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
      const alert = {
        alertId: 'alert "1",\\',
        revision: 7,
        createdAt: '12/3',
        state: {
          status: 'paused' as const,
          alert: {
            id: 'alert "1",\\',
            projectId: 'p',
            organizationId: 'o',
            title: '',
            description: null,
            kind: 'ENTITY_MENTION' as const,
            deliveryCadence: 'REALTIME' as const,
            entity: { entityType: 'PERSON' as const, entityId: names[0]! },
            notifications: [],
            filters: { languages: ['pt-BR'], speakerRoles: ['GUEST' as const] },
            disableTokens: {},
            createdAt: '2026-11-20T10:00:00.000Z',
            updatedAt: '2026-11-21T10:00:00.000Z',
            pausedAt: '2026-11-21T10:00:00.000Z',
            disabledAt: null,
            disabledBy: null,
            deletedAt: null,
          },
        },
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

  it('reads a snapshot whose alerts were never written (written before migration 0255) as having none', async () => {
    const { db, drop } = await createDb(engine);
    try {
      await db.query("insert into matcher_snapshot (name, position) values ('matcher', '5/5')");
      await db.query(
        `insert into matcher_snapshot_alerts (alert_id, revision, created_position, state)
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
