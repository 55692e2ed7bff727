import { createHash, createHmac } from 'node:crypto';
import { base62 } from '../ids.ts';
import { deriveKey } from '../secret-key.ts';
import type { DisableToken } from './alert.ts';

/**
 * Email-footer disable tokens. A token is HMAC(key, alertId, email, tokenId) with a random 130-bit
 * tokenId: unguessable without the key, yet never stored. The alert keeps only tokenId and
 * sha256(token), so the email sender can derive the link for every message while a database
 * leak yields no working link.
 */
export interface DisableTokens {
  /** A fresh token for one recipient of one alert. */
  issue(alertId: string, email: string): DisableToken;
  /** The token itself, for the link in an email to `email`. */
  tokenFor(alertId: string, email: string, tokenId: string): string;
}

export function createDisableTokens(rootKey: Buffer): DisableTokens {
  const key = deriveKey(rootKey, 'alert-disable-token');
  const tokenFor = (alertId: string, email: string, tokenId: string) =>
    createHmac('sha256', key).update(`${alertId}\n${email}\n${tokenId}`).digest('base64url');
  return {
    tokenFor,
    issue(alertId, email) {
      const tokenId = base62(22);
      return { email, tokenId, tokenSha256: hashDisableToken(tokenFor(alertId, email, tokenId)) };
    },
  };
}

export const hashDisableToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** 32 HMAC bytes in base64url. */
export const isWellFormedDisableToken = (token: string) => /^[A-Za-z0-9_-]{43}$/.test(token);

/** The List-Unsubscribe / footer link (contracts.md §8). */
export const disableUrl = (publicBaseUrl: string, token: string) =>
  `${publicBaseUrl}/v1/alerts/disable?token=${encodeURIComponent(token)}`;
