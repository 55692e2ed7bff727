import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  generateWebhookSecret,
  signWebhook,
  webhookSecretKey,
  webhookSecretPrefix,
  webhookSignatureHeaders,
} from '../../src/webhooks/signature.ts';

describe('webhook signing', () => {
  it('generates whsec_ secrets of 32 random bytes, each different', () => {
    const secrets = new Set(Array.from({ length: 50 }, generateWebhookSecret));
    expect(secrets.size).toBe(50);
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(webhookSecretKey(secret)).toHaveLength(32);
      expect(webhookSecretPrefix(secret)).toBe(secret.slice(0, 12));
    }
  });

  it('produces headers that the standardwebhooks verifier accepts', () => {
    const secret = generateWebhookSecret();
    const body = JSON.stringify({ type: 'alert.match', delivery_id: 'dlv_1', title: 'Café «Ünïcode» ✓' });
    const headers = webhookSignatureHeaders(secret, 'dlv_1', body, new Date());
    expect(headers['x-webhook-signature']).toBe(headers['webhook-signature']);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('signs "{id}.{timestamp}.{body}" with the decoded secret (known vector)', () => {
    // Test vector from the Standard Webhooks specification's reference libraries.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const signature = signWebhook(secret, {
      id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      timestamp: 1614265330,
      body: '{"test": 2432232314}',
    });
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('fails verification when one byte of the body changes', () => {
    const secret = generateWebhookSecret();
    const headers = webhookSignatureHeaders(secret, 'dlv_2', '{"a":1}', new Date());
    expect(() => new Webhook(secret).verify('{"a":2}', headers)).toThrow();
  });

  it('refuses a malformed secret', () => {
    expect(() => webhookSecretKey('not-a-secret')).toThrow('malformed');
    expect(() => webhookSecretKey('whsec_***')).toThrow('malformed');
  });
});
