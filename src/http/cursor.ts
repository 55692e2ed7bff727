import { createHmac, timingSafeEqual } from 'node:crypto';
import { BadRequestError } from '../errors.ts';

/**
 * Opaque page cursors: base64url(JSON) + "." + a truncated HMAC, so a client can pass one back
 * but cannot forge or edit one. The payload is a route's keyset position.
 */
export interface CursorCodec {
  encode(position: unknown): string;
  decode<T>(cursor: string, parameter?: string): T;
}

export function createCursorCodec(key: Buffer): CursorCodec {
  const sign = (body: string) => createHmac('sha256', key).update(body).digest().subarray(0, 16);
  return {
    encode(position) {
      const body = Buffer.from(JSON.stringify(position)).toString('base64url');
      return `${body}.${sign(body).toString('base64url')}`;
    },
    decode<T>(cursor: string, parameter = 'cursor'): T {
      const invalid = () =>
        new BadRequestError('invalid_cursor', `The ${parameter} is not one this service issued.`, [
          { location: `query.${parameter}`, message: 'unrecognised or altered cursor', value: cursor },
        ]);
      const [body, mac, extra] = cursor.split('.');
      if (!body || !mac || extra !== undefined) throw invalid();
      const given = Buffer.from(mac, 'base64url');
      const expected = sign(body);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
      try {
        return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as T;
      } catch {
        throw invalid();
      }
    },
  };
}
