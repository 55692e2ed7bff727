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
      expect(await writeSnapshot(db, { from: undefined, position: 'p1', replace: true, entries })).toBe(true);
      const snap = await readSnapshot(db);
      expect(snap?.position).toBe('p1');
      expect(snap?.entries.sort((a, b) => a.kind.localeCompare(b.kind))).toEqual(entries);
    } finally {
      await drop();
    }
  });
});
