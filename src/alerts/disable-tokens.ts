import { createHash, createHmac } from 'node:crypto';
import { base62 } from '../ids.ts';
import { deriveKey } from '../secret-key.ts';
import type { DisableToken } from './alert.ts';

/**
 * Email-footer disable tokens. A token is HMAC(key, alertId, email, tokenId) with a random 130-bit
 * tokenId: unguessable without the key, yet never stored. The alert keeps only tokenId and
 * sha256(token), so the email sender can derive the link for every message while a database
 * leak yields no working link.
 *
 * Across a rotation of EARSHOT_SECRET_KEY a recipient keeps the token it was issued: new tokens
 * come from the current key, and the sender finds, among the current and previous keys, the one
 * whose token has the stored hash. So the key that issued a recipient's token must stay in
 * EARSHOT_PREVIOUS_SECRET_KEYS for as long as its emails should carry a working link.
 */
export interface DisableTokens {
  /** A fresh token for one recipient of one alert, under the current key. */
  issue(alertId: string, email: string): DisableToken;
  /** The token under the current key, for the link in an email to `email`. */
  tokenFor(alertId: string, email: string, tokenId: string): string;
  /**
   * The token whose hash is the stored one, under the current key or a previous one: what an
   * email's link carries. Undefined when no configured key issued it.
   */
  linkToken(alertId: string, stored: DisableToken): string | undefined;
}

export function createDisableTokens(rootKey: Buffer, previousKeys: readonly Buffer[] = []): DisableTokens {
  const under = (root: Buffer) => {
    const key = deriveKey(root, 'alert-disable-token');
    return (alertId: string, email: string, tokenId: string) =>
      createHmac('sha256', key).update(`${alertId}\n${email}\n${tokenId}`).digest('base64url');
  };
  const tokenFor = under(rootKey);
  const everyKey = [tokenFor, ...previousKeys.map(under)];
  return {
    tokenFor,
    issue(alertId, email) {
      const tokenId = base62(22);
      return { email, tokenId, tokenSha256: hashDisableToken(tokenFor(alertId, email, tokenId)) };
    },
    linkToken(alertId, stored) {
      for (const derive of everyKey) {
        const token = derive(alertId, stored.email, stored.tokenId);
        if (hashDisableToken(token) === stored.tokenSha256) return token;
      }
      return undefined;
    },
  };
}

export const hashDisableToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** 32 HMAC bytes in base64url. */
export const isWellFormedDisableToken = (token: string) => /^[A-Za-z0-9_-]{43}$/.test(token);
