/** Drops null and undefined fields: optional fields are omitted when unknown, never null. */
export function compact<T extends Record<string, unknown>>(value: T): { [K in keyof T]: NonNullable<T[K]> } {
  // A loop, not Object.entries and fromEntries: a page of the lists compacts hundreds of objects.
  const kept: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = value[key];
    if (v === null || v === undefined) continue;
    // an own `__proto__` key (JSON.parse makes one) stays a key, as Object.fromEntries keeps it
    if (key === '__proto__')
      Object.defineProperty(kept, key, { value: v, enumerable: true, writable: true, configurable: true });
    else kept[key] = v;
  }
  return kept as { [K in keyof T]: NonNullable<T[K]> };
}
