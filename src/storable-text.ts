import type { ErrorDetail } from './errors.ts';

/**
 * Text PostgreSQL can keep in jsonb and text columns: no NUL characters and no lone UTF-16
 * surrogates (either makes a read model's cast fail, and every later event would wait behind it).
 * For text that comes from outside and is only recorded, never validated: SMTP replies, webhook
 * response bodies, chat API errors.
 */
export function storableText(text: string): string {
  return text.replaceAll('\u0000', '').toWellFormed();
}

const isContainer = (value: unknown): value is object =>
  value !== null && typeof value === 'object' && !(value instanceof Date);

/** The same for every string (and key) in a JSON-like value; iterative, so any depth is fine. */
export function storableJson<T>(value: T): T {
  const copy = (node: unknown): unknown =>
    typeof node === 'string' ? storableText(node) : !isContainer(node) ? node : Array.isArray(node) ? [] : {};
  const root = copy(value);
  const pending: [object, Record<string, unknown>][] = isContainer(value)
    ? [[value, root as Record<string, unknown>]]
    : [];
  while (pending.length > 0) {
    const [source, target] = pending.pop()!;
    for (const [key, child] of Object.entries(source)) {
      const copied = copy(child);
      target[Array.isArray(source) ? key : storableText(key)] = copied;
      if (isContainer(child)) pending.push([child, copied as Record<string, unknown>]);
    }
  }
  return root as T;
}

/**
 * Pointers to every string (value or key) holding U+0000 or a lone UTF-16 surrogate: JSON allows
 * both, PostgreSQL cannot store either as text, and a read model would stop at the event.
 * Iterative, so no nesting depth can overflow the stack; findings come in document order.
 */
export function unstorableText(root: unknown, rootPointer: string, found: ErrorDetail[] = []): ErrorDetail[] {
  // Every request's body, path and query come here: pointers are built only when something is wrong.
  if (allStorable(root)) return found;
  const check = (text: string, at: string) => {
    if (text.includes('\u0000'))
      found.push({ location: at, message: 'contains a NUL character (U+0000), which cannot be stored' });
    else if (!text.isWellFormed())
      found.push({ location: at, message: 'contains a lone UTF-16 surrogate, which is not text' });
  };
  const pending: [unknown, string][] = [[root, rootPointer]];
  while (pending.length > 0) {
    const [node, pointer] = pending.pop()!;
    if (typeof node === 'string') {
      check(node, pointer);
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    const children: [unknown, string][] = [];
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) children.push([item, `${pointer}/${i}`]);
    } else {
      for (const [key, value] of Object.entries(node)) {
        const at = `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
        children.push([key, at], [value, at]);
      }
    }
    for (let i = children.length - 1; i >= 0; i--) pending.push(children[i]!);
  }
  return found;
}

const storable = (text: string) => !text.includes('\u0000') && text.isWellFormed();

/** Whether every string (value or key) in a JSON-like value is storable; iterative, no allocation per string. */
function allStorable(root: unknown): boolean {
  if (typeof root === 'string') return storable(root);
  if (root === null || typeof root !== 'object') return true;
  const pending: object[] = [root];
  while (pending.length > 0) {
    const node = pending.pop()!;
    if (Array.isArray(node)) {
      for (const item of node) {
        if (typeof item === 'string') {
          if (!storable(item)) return false;
        } else if (item !== null && typeof item === 'object') pending.push(item);
      }
      continue;
    }
    for (const key in node) {
      if (!Object.hasOwn(node, key)) continue;
      if (!storable(key)) return false;
      const value = (node as Record<string, unknown>)[key];
      if (typeof value === 'string') {
        if (!storable(value)) return false;
      } else if (value !== null && typeof value === 'object') pending.push(value);
    }
  }
  return true;
}
