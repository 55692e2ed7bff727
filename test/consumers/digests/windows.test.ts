import { describe, expect, it } from 'vitest';
import { previousWindow, windowContaining } from '../../../consumers/digests/windows.ts';

const iso = (w: { start: Date; end: Date }) => [w.start.toISOString(), w.end.toISOString()];

describe('digest windows', () => {
  it('makes a DAILY window of the UTC day', () => {
    expect(iso(windowContaining('DAILY', new Date('2026-11-20T23:59:59.999Z')))).toEqual([
      '2026-11-20T00:00:00.000Z',
      '2026-11-21T00:00:00.000Z',
    ]);
    expect(iso(windowContaining('DAILY', new Date('2026-11-21T00:00:00Z')))).toEqual([
      '2026-11-21T00:00:00.000Z',
      '2026-11-22T00:00:00.000Z',
    ]);
  });

  it('makes a WEEKLY window from Monday 00:00 UTC to the next Monday', () => {
    for (const at of ['2026-11-23T00:00:00Z', '2026-11-26T12:00:00Z', '2026-11-29T23:59:59Z']) {
      expect(iso(windowContaining('WEEKLY', new Date(at)))).toEqual([
        '2026-11-23T00:00:00.000Z',
        '2026-11-30T00:00:00.000Z',
      ]);
    }
    expect(iso(previousWindow(windowContaining('WEEKLY', new Date('2026-11-23T00:00:00Z'))))).toEqual([
      '2026-11-16T00:00:00.000Z',
      '2026-11-23T00:00:00.000Z',
    ]);
  });
});
