/**
 * Text PostgreSQL can keep in jsonb and text columns: no NUL characters and no lone UTF-16
 * surrogates (either makes a read model's cast fail, and every later event would wait behind it).
 * For text that comes from outside and is only recorded, never validated: SMTP replies, webhook
 * response bodies, chat API errors.
 */
export function storableText(text: string): string {
  return text.replaceAll('\u0000', '').toWellFormed();
}

/** The same for every string (and key) in a JSON-like value. */
export function storableJson<T>(value: T): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (Array.isArray(value)) return value.map(storableJson) as T;
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [storableText(k), storableJson(v)])) as T;
  }
  return value;
}
