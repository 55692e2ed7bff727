import { createHmac, timingSafeEqual } from 'node:crypto';
import { BadRequestError } from '../errors.ts';

/**
 * Opaque page cursors: base64url(JSON) + "." + a truncated HMAC, so a client can pass one back
 * but cannot forge or edit one. The payload is a route's keyset position. Cursors are signed with
 * `key` and accepted under `previous` too, so paging survives a rotation of EARSHOT_SECRET_KEY and
 * a rolling restart in which processes with the old and the new key answer the same client.
 */
export interface CursorCodec {
  encode(position: unknown): string;
  decode<T>(cursor: string, parameter?: string): T;
}

export function createCursorCodec(key: Buffer, previous: readonly Buffer[] = []): CursorCodec {
  const signer = (k: Buffer) => (body: string) =>
    createHmac('sha256', k).update(body).digest().subarray(0, 16);
  const sign = signer(key);
  const verifiers = [sign, ...previous.map(signer)];
  const signedByOne = (body: string, given: Buffer) =>
    verifiers.some((verifier) => {
      const expected = verifier(body);
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
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
      if (!signedByOne(body, Buffer.from(mac, 'base64url'))) throw invalid();
      try {
        return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as T;
      } catch {
        throw invalid();
      }
    },
  };
}
