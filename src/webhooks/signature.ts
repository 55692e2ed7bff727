import { createHmac, randomBytes } from 'node:crypto';

/** Standard Webhooks signing (https://www.standardwebhooks.com); docs/delivery.md, Webhook body and signature. */

export const WEBHOOK_SECRET_MARKER = 'whsec_';

/** A new connection secret: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_MARKER + randomBytes(32).toString('base64');
}

/** The part of a secret that may be shown again (`secret_prefix`): its first 12 characters. */
export function webhookSecretPrefix(secret: string): string {
  return secret.slice(0, 12);
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The HMAC key of a secret: its base64 part decoded. */
export function webhookSecretKey(secret: string): Buffer {
  const encoded = secret.startsWith(WEBHOOK_SECRET_MARKER) ? secret.slice(WEBHOOK_SECRET_MARKER.length) : '';
  if (encoded === '' || !BASE64.test(encoded)) {
    throw new Error('A webhook secret is "whsec_" followed by base64; this one is malformed.');
  }
  return Buffer.from(encoded, 'base64');
}

export interface SignedContent {
  /** webhook-id: the delivery id, the same on every retry. */
  id: string;
  /** webhook-timestamp: whole seconds since the Unix epoch. */
  timestamp: number;
  /** The exact body that is sent. */
  body: string;
}

/** `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`. */
export function signWebhook(secret: string, { id, timestamp, body }: SignedContent): string {
  const mac = createHmac('sha256', webhookSecretKey(secret))
    .update(`${id}.${timestamp}.${body}`)
    .digest('base64');
  return `v1,${mac}`;
}

/** The signature headers of one attempt, signed at `at`. */
export function webhookSignatureHeaders(
  secret: string,
  id: string,
  body: string,
  at: Date,
): Record<string, string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  const signature = signWebhook(secret, { id, timestamp, body });
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signature,
    'x-webhook-signature': signature,
  };
}
