import { describe, expect, it } from 'vitest';
import { compact } from '../../src/catalog/compact.ts';

describe('compact', () => {
  it('drops null and undefined fields and keeps every other own field in order', () => {
    const out = compact({ a: 1, b: null, c: undefined, d: 0, e: '', f: false, g: [], h: {} });
    expect(JSON.stringify(out)).toBe('{"a":1,"d":0,"e":"","f":false,"g":[],"h":{}}');
  });

  it('keeps an own __proto__ key as a key and copies no inherited field', () => {
    const parsed = JSON.parse('{"__proto__":{"polluted":true},"x":1}') as Record<string, unknown>;
    const out = compact(parsed) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(out.polluted).toBeUndefined();
    expect(JSON.stringify(out)).toBe('{"__proto__":{"polluted":true},"x":1}');
    const child = Object.assign(Object.create({ inherited: 1 }) as Record<string, unknown>, { own: 2 });
    expect(compact(child)).toEqual({ own: 2 });
  });
});
