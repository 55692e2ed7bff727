import type { ErrorObject } from 'ajv';
import type { ErrorDetail } from './errors.ts';

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
  if (value !== undefined) detail.value = value;
  return detail;
}
