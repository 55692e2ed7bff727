import type { ErrorObject } from 'ajv';
import type { ErrorDetail } from './errors.ts';

/** Rejected values are echoed at most this long (docs/api-conventions.md). */
const MAX_VALUE_CHARS = 100;

/**
 * A rejected value as echoed in `errors[].value`: strings cut to MAX_VALUE_CHARS characters with
 * a trailing …, arrays and objects kept only when their JSON is that short, otherwise summarised
 * as "[array of N items]" or "{object with N properties}". Never walks more than a few nodes.
 */
export function shortValue(value: unknown): unknown {
  if (typeof value === 'string') {
    if (value.length <= MAX_VALUE_CHARS) return value;
    const end = /[\uD800-\uDBFF]/.test(value.charAt(MAX_VALUE_CHARS - 1))
      ? MAX_VALUE_CHARS - 1
      : MAX_VALUE_CHARS;
    return `${value.slice(0, end)}…`;
  }
  if (value === null || typeof value !== 'object') return value;
  const size = Array.isArray(value) ? value.length : Object.keys(value).length;
  if (size <= 10 && shallowJsonLength(value, MAX_VALUE_CHARS) <= MAX_VALUE_CHARS) return value;
  return Array.isArray(value) ? `[array of ${size} items]` : `{object with ${size} properties}`;
}

/** The JSON length of a value, or something above `budget` as soon as it is known to exceed it. */
function shallowJsonLength(root: unknown, budget: number): number {
  let length = 0;
  const pending: unknown[] = [root];
  while (pending.length > 0 && length <= budget) {
    const node = pending.pop();
    if (node !== null && typeof node === 'object') {
      const entries = Array.isArray(node) ? node : Object.entries(node).flat();
      length += 2 + entries.length;
      pending.push(...entries.slice(0, budget));
    } else {
      length += typeof node === 'string' ? node.length + 2 : String(node).length;
    }
  }
  return length;
}

/** The value at a JSON pointer, or undefined when the path does not exist. */
export function valueAt(root: unknown, pointer: string): unknown {
  let node = root;
  for (const raw of pointer.split('/').slice(1)) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[raw.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  return node;
}

/**
 * One ajv error as an ErrorDetail: the pointer names the offending property itself (for a missing
 * or unknown property too), `locate` turns it into the caller's location form, and the value is
 * the one found there.
 */
export function ajvErrorDetail(
  error: Pick<ErrorObject, 'instancePath' | 'keyword' | 'message' | 'params'>,
  root: unknown,
  locate: (pointer: string) => string,
): ErrorDetail {
  let pointer = error.instancePath;
  if (error.keyword === 'required') pointer += `/${String(error.params.missingProperty)}`;
  if (error.keyword === 'additionalProperties') pointer += `/${String(error.params.additionalProperty)}`;
  const message =
    error.keyword === 'additionalProperties'
      ? 'is not a known property'
      : error.keyword === 'enum'
        ? `must be one of ${(error.params.allowedValues as unknown[]).join(', ')}`
        : (error.message ?? 'is invalid');
  const detail: ErrorDetail = { location: locate(pointer), message };
  const value = error.keyword === 'required' ? undefined : valueAt(root, pointer);
  if (value !== undefined) detail.value = shortValue(value);
  return detail;
}
