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
  /**
   * The position of a cursor this service signed. Every route signs with the same key, so a route
   * whose position has a shape of its own passes `fits`: a cursor of another route is then 400
   * `invalid_cursor` too, not a position its query cannot read.
   */
  decode<T>(cursor: string, parameter?: string, fits?: (position: unknown) => position is T): T;
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
    decode<T>(cursor: string, parameter = 'cursor', fits?: (position: unknown) => position is T): T {
      const invalid = () =>
        new BadRequestError('invalid_cursor', `The ${parameter} is not one this service issued.`, [
          { location: `query.${parameter}`, message: 'unrecognised or altered cursor', value: cursor },
        ]);
      const [body, mac, extra] = cursor.split('.');
      if (!body || !mac || extra !== undefined) throw invalid();
      if (!signedByOne(body, Buffer.from(mac, 'base64url'))) throw invalid();
      let position: unknown;
      try {
        position = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      } catch {
        throw invalid();
      }
      if (fits && !fits(position))
        throw new BadRequestError('invalid_cursor', `The ${parameter} belongs to another list.`, [
          { location: `query.${parameter}`, message: 'issued for another list', value: cursor },
        ]);
      return position as T;
    },
  };
}
