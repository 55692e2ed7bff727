/**
 * Reads shared by the requests that ask for the same key while one is under way: such a request
 * waits for the next read of its key, which begins after it arrived, so it sees every change
 * committed before it came, as a read of its own would (docs/catalog.md, "Reads shared"). On a
 * small host a statement's socket write and the backend's wake-up cost more than a request's work
 * in memory. A key names one read: the read of the request that starts it serves every request
 * of that key meanwhile, and nothing may change the value it gives.
 */
export class SharedReads<T> {
  readonly #slots = new Map<string, { running?: Promise<T>; next?: Promise<T> }>();

  after(key: string, read: () => Promise<T>): Promise<T> {
    let slot = this.#slots.get(key);
    if (!slot) {
      slot = {};
      this.#slots.set(key, slot);
    }
    const s = slot;
    if (!s.running) {
      const running = read().finally(() => {
        if (s.running === running) s.running = undefined;
        if (!s.next && this.#slots.get(key) === s) this.#slots.delete(key);
      });
      s.running = running;
      return running;
    }
    s.next ??= s.running
      .catch(() => undefined)
      .then(() => {
        s.next = undefined;
        return this.after(key, read);
      });
    return s.next;
  }
}
