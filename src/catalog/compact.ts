/** Drops null and undefined fields: optional fields are omitted when unknown, never null. */
export function compact<T extends Record<string, unknown>>(value: T): { [K in keyof T]: NonNullable<T[K]> } {
  // A loop, not Object.entries and fromEntries: a page of the lists compacts hundreds of objects.
  const kept: Record<string, unknown> = {};
  for (const key in value) {
    const v = value[key];
    if (v !== null && v !== undefined) kept[key] = v;
  }
  return kept as { [K in keyof T]: NonNullable<T[K]> };
}
