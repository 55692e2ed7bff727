import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config.ts';

/**
 * The 32-byte root key (EARSHOT_SECRET_KEY, base64). When unset it is generated once into
 * DATA_DIR/secret.key (mode 0600), so one machine keeps working across restarts; several
 * processes or machines must share EARSHOT_SECRET_KEY. After a rotation the old key is listed in
 * EARSHOT_PREVIOUS_SECRET_KEYS (config.ts) until nothing needs it (docs/operations.md).
 */
export function loadSecretKey(config: Pick<Config, 'secretKey' | 'dataDir'>): Buffer {
  if (config.secretKey) return decodeKey(config.secretKey, 'EARSHOT_SECRET_KEY');
  const file = join(config.dataDir, 'secret.key');
  if (existsSync(file)) return decodeKey(readFileSync(file, 'utf8').trim(), file);
  mkdirSync(config.dataDir, { recursive: true });
  const key = randomBytes(32);
  try {
    writeFileSync(file, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      return decodeKey(readFileSync(file, 'utf8').trim(), file);
    throw error;
  }
  chmodSync(file, 0o600);
  return key;
}

/** A 32-byte key from its base64 text; `source` names where it came from in the error. */
export function decodeKey(text: string, source: string): Buffer {
  const key = Buffer.from(text, 'base64');
  if (key.length !== 32)
    throw new Error(`${source} must be 32 bytes encoded as base64 (got ${key.length} bytes)`);
  return key;
}

/** A purpose-bound subkey, so one root key never signs two kinds of thing. */
export function deriveKey(root: Buffer, purpose: string): Buffer {
  return createHmac('sha256', root).update(`earshot:${purpose}`).digest();
}
