import { describe, expect, it } from 'vitest';
import { SharedReads } from '../../src/catalog/shared-reads.ts';

/** Reads whose settling the test decides, each numbered in the order it began. */
function reads() {
  const begun: { key: string; resolve: (value: string) => void; reject: (error: Error) => void }[] = [];
  const read = (key: string) => () =>
    new Promise<string>((resolve, reject) => {
      begun.push({ key, resolve, reject });
    });
  return { begun, read };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('reads shared by the requests of one key', () => {
  it('serves the requests that arrive while a read is under way from one read begun after them', async () => {
    const shared = new SharedReads<string>();
    const { begun, read } = reads();
    const first = shared.after('ep-1', read('ep-1'));
    // arrived while the first read is under way: the first read may have begun before a change they must see
    const second = shared.after('ep-1', read('ep-1'));
    const third = shared.after('ep-1', read('ep-1'));
    expect(begun).toHaveLength(1);
    begun[0]!.resolve('one');
    expect(await first).toBe('one');
    await settled();
    expect(begun).toHaveLength(2);
    // arrived while the second read is under way: waits for a third
    const fourth = shared.after('ep-1', read('ep-1'));
    begun[1]!.resolve('two');
    expect(await second).toBe('two');
    expect(await third).toBe('two');
    await settled();
    expect(begun).toHaveLength(3);
    begun[2]!.resolve('three');
    expect(await fourth).toBe('three');
  });

  it('reads each key on its own, and again once no read of it is under way', async () => {
    const shared = new SharedReads<string>();
    const { begun, read } = reads();
    const a = shared.after('ep-a', read('ep-a'));
    const b = shared.after('ep-b', read('ep-b'));
    expect(begun.map((r) => r.key)).toEqual(['ep-a', 'ep-b']);
    begun[1]!.resolve('b');
    begun[0]!.resolve('a');
    expect([await a, await b]).toEqual(['a', 'b']);
    const again = shared.after('ep-a', read('ep-a'));
    expect(begun).toHaveLength(3);
    begun[2]!.resolve('a2');
    expect(await again).toBe('a2');
  });

  it("fails only the requests of a failed read; the ones waiting for the next read get the next read's value", async () => {
    const shared = new SharedReads<string>();
    const { begun, read } = reads();
    const first = shared.after('ep-1', read('ep-1'));
    const second = shared.after('ep-1', read('ep-1'));
    begun[0]!.reject(new Error('connection lost'));
    await expect(first).rejects.toThrow('connection lost');
    await settled();
    expect(begun).toHaveLength(2);
    begun[1]!.resolve('fine');
    expect(await second).toBe('fine');
    const failing = shared.after('ep-1', read('ep-1'));
    begun[2]!.reject(new Error('again'));
    await expect(failing).rejects.toThrow('again');
    // nothing left waiting: the next request reads at once
    shared.after('ep-1', read('ep-1'));
    expect(begun).toHaveLength(4);
  });
});
