import { createHmac } from 'node:crypto';
import { uuidFromName } from '../ids.ts';
import { deriveKey } from '../secret-key.ts';
import type { DigestCadence } from './delivery.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function base62Of(bytes: Buffer, length: number): string {
  let n = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (out.length < length) {
    out = BASE62[Number(n % 62n)]! + out;
    n /= 62n;
  }
  return out;
}

/**
 * Delivery ids are the access factor of the public landing read, so they must be unguessable
 * (128 bits of an HMAC under a purpose key of EARSHOT_SECRET_KEY), yet a redelivered AlertMatched
 * or a repeated digest run must land on the same stream: so they are derived, not random.
 *
 * Only the current key derives them, never a previous one: after a leak, ids of new deliveries
 * must not be computable with the leaked key. Ids already made keep working (they are stored).
 * The cost is confined to a rotation: a fan-out batch or digest interrupted by a crash under one
 * key and redone under the other gets new ids (docs/operations.md, "Rotating EARSHOT_SECRET_KEY").
 */
export interface DeliveryIds {
  realtime(matchId: string, channelKey: string): string;
  digest(alertId: string, channelKey: string, cadence: DigestCadence, windowStart: Date): string;
}

export function createDeliveryIds(rootKey: Buffer): DeliveryIds {
  const key = deriveKey(rootKey, 'delivery-id');
  // 22 base62 characters hold 130 bits; the first 16 HMAC bytes give 128 uniform ones.
  const id = (name: string) => base62Of(createHmac('sha256', key).update(name).digest().subarray(0, 16), 22);
  return {
    realtime: (matchId, channelKey) => id(`realtime\n${matchId}\n${channelKey}`),
    digest: (alertId, channelKey, cadence, windowStart) =>
      id(`digest\n${alertId}\n${channelKey}\n${cadence}\n${windowStart.toISOString()}`),
  };
}

/** Event ids that make a repeated step a no-op: one per delivery and step (and attempt). */
export const deliveryEventId = (deliveryId: string, step: string) =>
  uuidFromName(`earshot:delivery:${deliveryId}:${step}`);
