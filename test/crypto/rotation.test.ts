import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDisableTokens, hashDisableToken } from '../../src/alerts/disable-tokens.ts';
import { loadConfig } from '../../src/config.ts';
import { createSecretBox, openSecretBox, SecretBoxError } from '../../src/crypto/secret-box.ts';
import { createCursorCodec } from '../../src/http/cursor.ts';
import { deriveKey } from '../../src/secret-key.ts';

const keyA = randomBytes(32);
const keyB = randomBytes(32);
const cursorKey = (root: Buffer) => deriveKey(root, 'cursor');

describe('EARSHOT_PREVIOUS_SECRET_KEYS', () => {
  it('parses comma-separated base64 keys, in order, and is empty when unset', () => {
    const config = loadConfig({
      EARSHOT_PREVIOUS_SECRET_KEYS: ` ${keyA.toString('base64')} ,${keyB.toString('base64')},`,
    });
    expect(config.previousSecretKeys).toEqual([keyA, keyB]);
    expect(loadConfig({}).previousSecretKeys).toEqual([]);
  });

  it('refuses a key that is not 32 bytes of base64, naming the variable and which key', () => {
    expect(() =>
      loadConfig({
        EARSHOT_PREVIOUS_SECRET_KEYS: `${keyA.toString('base64')},${randomBytes(16).toString('base64')}`,
      }),
    ).toThrow(/^EARSHOT_PREVIOUS_SECRET_KEYS \(key 2\) must be 32 bytes encoded as base64 \(got 16 bytes\)$/);
  });
});

describe('the secret box across a rotation', () => {
  it('opens what the previous key sealed, seals under the current one, and then needs only it', () => {
    const sealedUnderA = createSecretBox(keyA).seal('whsec_old', 'webhook-secret');
    const rotated = createSecretBox(keyB, [keyA]);
    expect(rotated.open(sealedUnderA, 'webhook-secret')).toBe('whsec_old');
    expect(rotated.needsReseal(sealedUnderA)).toBe(true);
    const resealed = rotated.seal(rotated.open(sealedUnderA, 'webhook-secret'), 'webhook-secret');
    expect(rotated.needsReseal(resealed)).toBe(false);
    expect(createSecretBox(keyB).open(resealed, 'webhook-secret')).toBe('whsec_old');
    expect(() => createSecretBox(keyB).open(sealedUnderA, 'webhook-secret')).toThrow(SecretBoxError);
    expect(() => createSecretBox(keyB).open(sealedUnderA, 'webhook-secret')).toThrow(
      /EARSHOT_PREVIOUS_SECRET_KEYS/,
    );
  });

  it('is made from the configuration with its previous keys', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'earshot-rotation-'));
    const sealedUnderA = createSecretBox(keyA).seal('xoxb-1', 'chat-bot-token');
    const config = loadConfig({
      DATA_DIR: dataDir,
      EARSHOT_SECRET_KEY: keyB.toString('base64'),
      EARSHOT_PREVIOUS_SECRET_KEYS: keyA.toString('base64'),
    });
    expect(openSecretBox(config).open(sealedUnderA, 'chat-bot-token')).toBe('xoxb-1');
  });

  it('lets processes still on the old key, given the new one as previous, open what the new key seals', () => {
    // The staging step of docs/operations.md: old processes accept B before any process seals with it.
    const sealedUnderB = createSecretBox(keyB, [keyA]).seal('whsec_new', 'webhook-secret');
    expect(createSecretBox(keyA, [keyB]).open(sealedUnderB, 'webhook-secret')).toBe('whsec_new');
  });
});

describe('cursors across a rotation', () => {
  it('accepts a cursor signed by a previous key and signs new ones with the current key only', () => {
    const underA = createCursorCodec(cursorKey(keyA));
    const rotated = createCursorCodec(cursorKey(keyB), [cursorKey(keyA)]);
    const issuedUnderA = underA.encode({ c: '2026-11-20T10:00:00.000Z', i: 'abc' });
    expect(rotated.decode(issuedUnderA)).toEqual({ c: '2026-11-20T10:00:00.000Z', i: 'abc' });
    const issuedUnderB = rotated.encode({ i: 'def' });
    expect(createCursorCodec(cursorKey(keyB)).decode(issuedUnderB)).toEqual({ i: 'def' });
    expect(() => underA.decode(issuedUnderB)).toThrow(/not one this service issued/);
    // Once A is removed, its cursors are refused (the client starts the listing again).
    expect(() => createCursorCodec(cursorKey(keyB)).decode(issuedUnderA)).toThrow(
      /not one this service issued/,
    );
  });

  it('still refuses an altered cursor when several keys are accepted', () => {
    const rotated = createCursorCodec(cursorKey(keyB), [cursorKey(keyA)]);
    const [body, mac] = rotated.encode({ i: 'abc' }).split('.') as [string, string];
    const altered = Buffer.from(JSON.stringify({ i: 'zzz' })).toString('base64url');
    expect(() => rotated.decode(`${altered}.${mac}`)).toThrow(/not one this service issued/);
    expect(() => rotated.decode(`${body}.${mac.slice(0, -2)}`)).toThrow(/not one this service issued/);
  });
});

describe('disable tokens across a rotation', () => {
  it('gives each recipient the token it was issued, under whichever configured key issued it', () => {
    const issuedUnderA = createDisableTokens(keyA).issue('alert-1', 'ops@example.com');
    const rotated = createDisableTokens(keyB, [keyA]);
    const token = rotated.linkToken('alert-1', issuedUnderA);
    expect(token).toBeDefined();
    expect(hashDisableToken(token!)).toBe(issuedUnderA.tokenSha256);
    // The current key's derivation would not match: the link must not come from it.
    expect(hashDisableToken(rotated.tokenFor('alert-1', 'ops@example.com', issuedUnderA.tokenId))).not.toBe(
      issuedUnderA.tokenSha256,
    );
    const issuedUnderB = rotated.issue('alert-1', 'new@example.com');
    expect(hashDisableToken(rotated.linkToken('alert-1', issuedUnderB)!)).toBe(issuedUnderB.tokenSha256);
    expect(createDisableTokens(keyB).linkToken('alert-1', issuedUnderA)).toBeUndefined();
  });
});
