import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Config } from '../config.ts';
import { deriveKey, loadSecretKey } from '../secret-key.ts';

/**
 * Encrypts secrets at rest (webhook signing secrets, chat bot tokens) with AES-256-GCM under a
 * key derived from the root key (EARSHOT_SECRET_KEY, see src/secret-key.ts).
 *
 * Format: `v1.<keyId>.<iv>.<ciphertext>.<tag>`, each part base64url. keyId names the key that
 * sealed it (8 bytes of sha256 of the derived key), so after a rotation the old key is passed as
 * `previous` (EARSHOT_PREVIOUS_SECRET_KEYS) and `earshot secrets reseal` moves what it sealed to the
 * current key (src/cli/secrets.ts). The purpose is bound as additional authenticated
 * data, so a bot token cannot be decrypted in the place of a webhook secret.
 */
export interface SecretBox {
  seal(plaintext: string, purpose: string): string;
  open(sealed: string, purpose: string): string;
  /** True when `sealed` was made with an older key and should be sealed again. */
  needsReseal(sealed: string): boolean;
}

const VERSION = 'v1';

export class SecretBoxError extends Error {
  override readonly name = 'SecretBoxError';
}

interface Key {
  id: string;
  bytes: Buffer;
}

function keyFrom(root: Buffer): Key {
  const bytes = deriveKey(root, 'secret-box');
  return { id: createHash('sha256').update(bytes).digest().subarray(0, 8).toString('base64url'), bytes };
}

export function createSecretBox(rootKey: Buffer, previous: readonly Buffer[] = []): SecretBox {
  const current = keyFrom(rootKey);
  const keys = new Map<string, Key>([current, ...previous.map(keyFrom)].map((key) => [key.id, key]));
  return {
    seal(plaintext, purpose) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', current.bytes, iv);
      cipher.setAAD(Buffer.from(`${VERSION}.${current.id}.${purpose}`));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const parts = [iv, ciphertext, cipher.getAuthTag()].map((part) => part.toString('base64url'));
      return [VERSION, current.id, ...parts].join('.');
    },
    open(sealed, purpose) {
      const [version, keyId, iv, ciphertext, tag, extra] = sealed.split('.');
      if (
        version !== VERSION ||
        !keyId ||
        iv === undefined ||
        ciphertext === undefined ||
        !tag ||
        extra !== undefined
      ) {
        throw new SecretBoxError('Not a sealed secret of a known format.');
      }
      const key = keys.get(keyId);
      if (!key)
        throw new SecretBoxError(
          `Sealed with key ${keyId}, which is not configured: was EARSHOT_SECRET_KEY changed without keeping the old key in EARSHOT_PREVIOUS_SECRET_KEYS?`,
        );
      try {
        const decipher = createDecipheriv('aes-256-gcm', key.bytes, Buffer.from(iv, 'base64url'));
        decipher.setAAD(Buffer.from(`${version}.${keyId}.${purpose}`));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([
          decipher.update(Buffer.from(ciphertext, 'base64url')),
          decipher.final(),
        ]).toString('utf8');
      } catch (cause) {
        throw new SecretBoxError(
          'The sealed secret failed authentication (altered, or sealed for another purpose).',
          {
            cause,
          },
        );
      }
    },
    needsReseal(sealed) {
      return sealed.split('.')[1] !== current.id;
    },
  };
}

/**
 * The box under the configured root key (EARSHOT_SECRET_KEY, else DATA_DIR/secret.key made once),
 * opening what the previous keys sealed.
 */
export const openSecretBox = (
  config: Pick<Config, 'secretKey' | 'dataDir'> & Partial<Pick<Config, 'previousSecretKeys'>>,
) => createSecretBox(loadSecretKey(config), config.previousSecretKeys ?? []);
