import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSecretBox, openSecretBox, SecretBoxError } from '../../src/crypto/secret-box.ts';

const keyA = Buffer.alloc(32, 1);
const keyB = Buffer.alloc(32, 2);

describe('the secret box', () => {
  it('opens what it sealed, and never seals the same plaintext to the same text twice', () => {
    const box = createSecretBox(keyA);
    const sealed = box.seal('whsec_abc', 'webhook-secret');
    expect(box.open(sealed, 'webhook-secret')).toBe('whsec_abc');
    expect(box.seal('whsec_abc', 'webhook-secret')).not.toBe(sealed);
    expect(sealed).not.toContain('whsec_abc');
    expect(sealed).toMatch(/^v1\.[\w-]{11}\.[\w-]{16}\.[\w-]+\.[\w-]{22}$/);
  });

  it('refuses a sealed secret that was altered', () => {
    const box = createSecretBox(keyA);
    const parts = box.seal('xoxb-token', 'chat-bot-token').split('.');
    const ciphertext = Buffer.from(parts[3]!, 'base64url');
    ciphertext[0]! ^= 1;
    parts[3] = ciphertext.toString('base64url');
    expect(() => box.open(parts.join('.'), 'chat-bot-token')).toThrow(SecretBoxError);
  });

  it('refuses to open a secret for another purpose than it was sealed for', () => {
    const box = createSecretBox(keyA);
    expect(() => box.open(box.seal('x', 'webhook-secret'), 'chat-bot-token')).toThrow(/another purpose/);
  });

  it('names a missing key instead of failing obscurely, and opens old secrets after a rotation', () => {
    const old = createSecretBox(keyA);
    const sealed = old.seal('s3cret', 'p');
    expect(() => createSecretBox(keyB).open(sealed, 'p')).toThrow(/not configured/);
    const rotated = createSecretBox(keyB, [keyA]);
    expect(rotated.open(sealed, 'p')).toBe('s3cret');
    expect(rotated.needsReseal(sealed)).toBe(true);
    expect(rotated.needsReseal(rotated.seal('s3cret', 'p'))).toBe(false);
  });

  it('rejects text of an unknown format', () => {
    const box = createSecretBox(keyA);
    expect(() => box.open('plain', 'p')).toThrow(/known format/);
    expect(() => box.open('v2.a.b.c.d', 'p')).toThrow(SecretBoxError);
  });

  it('generates the root key once into DATA_DIR/secret.key with mode 0600 when none is configured', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'earshot-box-'));
    const first = openSecretBox({ secretKey: undefined, dataDir });
    const file = join(dataDir, 'secret.key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64')).toHaveLength(32);
    const second = openSecretBox({ secretKey: undefined, dataDir });
    expect(second.open(first.seal('kept', 'p'), 'p')).toBe('kept');
  });

  it('uses EARSHOT_SECRET_KEY when set', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'earshot-box-'));
    const fromEnv = openSecretBox({ secretKey: keyA.toString('base64'), dataDir });
    expect(createSecretBox(keyA).open(fromEnv.seal('v', 'p'), 'p')).toBe('v');
    expect(() => openSecretBox({ secretKey: Buffer.alloc(16).toString('base64'), dataDir })).toThrow(
      /32 bytes/,
    );
  });
});
