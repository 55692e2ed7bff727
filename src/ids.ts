import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A random base62 string; 22 characters carry 130 bits. Rejection sampling keeps it unbiased. */
export function base62(length = 22): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export const isBase62 = (value: string) => /^[0-9A-Za-z]+$/.test(value);
