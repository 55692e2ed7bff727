import { createHash } from 'node:crypto';

/** Namespace of match ids (a fixed random UUID); never change it, or every match id changes. */
const MATCH_NAMESPACE = Buffer.from('3f0c6a52e1b84d7f9a5c2b7d8e4f1a60', 'hex');

/**
 * The match id of (alert, episode): a name-based UUID (version 5, SHA-1) so every redelivery or
 * re-send of the episode produces the same id and the append stays idempotent.
 */
export function matchId(alertId: string, episodeId: string): string {
  const hash = createHash('sha1')
    .update(MATCH_NAMESPACE)
    .update(JSON.stringify([alertId, episodeId]))
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
