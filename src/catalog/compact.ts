/** Drops null and undefined fields: optional fields are omitted when unknown, never null. */
export function compact<T extends Record<string, unknown>>(value: T): { [K in keyof T]: NonNullable<T[K]> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null && v !== undefined)) as {
    [K in keyof T]: NonNullable<T[K]>;
  };
}
