/**
 * Values kept per process up to `maxBytes` in all, least recently used first out; a value over a
 * quarter of `maxBytes` is never kept (docs/catalog.md, "Response cache"). Sizes are the caller's
 * estimate of what a value holds in memory.
 */
export class ByteLru<V> {
  readonly #entries = new Map<string, { value: V; size: number }>();
  #bytes = 0;

  constructor(readonly maxBytes: number) {}

  /** Bytes held now, as counted against `maxBytes`. */
  get bytes() {
    return this.#bytes;
  }

  /** Whether a value of `size` bytes may be kept at all. */
  fits(size: number) {
    return size <= this.maxBytes / 4;
  }

  /** The value under `key`, now the most recently used. */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Keeps `value` under `key` in place of what was there; false when it does not fit (nothing kept). */
  set(key: string, value: V, size: number): boolean {
    this.delete(key);
    if (!this.fits(size)) return false;
    this.#entries.set(key, { value, size });
    this.#bytes += size;
    this.#evict();
    return true;
  }

  /**
   * Counts `size` more bytes for `value` (it took on more), while `key` still holds it and it still
   * fits; false, and nothing counted, otherwise.
   */
  grow(key: string, value: V, size: number): boolean {
    const entry = this.#entries.get(key);
    if (entry?.value !== value || !this.fits(entry.size + size)) return false;
    entry.size += size;
    this.#bytes += size;
    this.#evict();
    return true;
  }

  delete(key: string) {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#bytes -= entry.size;
  }

  #evict() {
    while (this.#bytes > this.maxBytes) this.delete(this.#entries.keys().next().value as string);
  }
}
