import { createPrivateKey, createPublicKey, type KeyObject, randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, createLocalJWKSet, type JWK, jwtVerify, SignJWT } from 'jose';
import { deriveKey } from '../../secret-key.ts';

/** Access tokens live 15 minutes, refresh tokens 30 days, codes 60 seconds (docs/agents.md). */
export const ACCESS_TOKEN_SECONDS = 15 * 60;
export const REFRESH_TOKEN_SECONDS = 30 * 24 * 3600;
export const CODE_SECONDS = 60;

export const SCOPES = ['mcp:read', 'mcp:write'] as const;
export type Scope = (typeof SCOPES)[number];

export interface AccessClaims {
  sub: string;
  client_id: string;
  project_id: string;
  organization_id: string;
  grant_id: string;
  scope: string;
}

interface SigningKey {
  kid: string;
  alg: string;
  privateKey: KeyObject;
  jwk: JWK;
}

// The PKCS#8 prefix of a raw 32-byte Ed25519 seed.
const ED25519_PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex');

function algOf(key: KeyObject) {
  if (key.asymmetricKeyType === 'ed25519') return 'EdDSA';
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256';
  throw new Error('EARSHOT_OAUTH_SIGNING_KEY must be an Ed25519, P-256 or RSA private key (PKCS#8 PEM).');
}

async function signingKey(privateKey: KeyObject): Promise<SigningKey> {
  const alg = algOf(privateKey);
  const publicJwk = createPublicKey(privateKey).export({ format: 'jwk' }) as JWK;
  const kid = await calculateJwkThumbprint(publicJwk);
  return { kid, alg, privateKey, jwk: { ...publicJwk, kid, alg, use: 'sig' } };
}

/** Ed25519 from a purpose-bound subkey of a root key: every process sharing the root key signs alike. */
const derivedKey = (root: Buffer) =>
  createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8, deriveKey(root, 'oauth-signing')]),
    format: 'der',
    type: 'pkcs8',
  });

export interface TokenIssuer {
  /** The issuer (PUBLIC_BASE_URL) and the audience of every access token (the MCP URL). */
  issuer: string;
  audience: string;
  jwks(): { keys: JWK[] };
  sign(claims: AccessClaims, now: Date): Promise<string>;
  /** The claims of a valid token; undefined for anything else (bad signature, audience, expiry). */
  /** The claims of a valid token, with its expiry (`exp`, seconds since the epoch). */
  verify(token: string, now: Date): Promise<(AccessClaims & { exp: number }) | undefined>;
}

/**
 * Signs with EARSHOT_OAUTH_SIGNING_KEY (PEM) when set, else with an Ed25519 key derived from the
 * root secret key. Tokens signed under a previous root key still verify until they expire.
 */
export async function createTokenIssuer(options: {
  issuer: string;
  audience: string;
  rootKey: Buffer;
  previousRootKeys?: readonly Buffer[];
  signingKeyPem?: string | undefined;
}): Promise<TokenIssuer> {
  const current = await signingKey(
    options.signingKeyPem ? createPrivateKey(options.signingKeyPem) : derivedKey(options.rootKey),
  );
  const previous = await Promise.all(
    (options.previousRootKeys ?? []).map((key) => signingKey(derivedKey(key))),
  );
  const keys = [current, ...previous.filter((key) => key.kid !== current.kid)];
  const keySet = createLocalJWKSet({ keys: keys.map((key) => key.jwk) });
  const algorithms = [...new Set(keys.map((key) => key.alg))];
  return {
    issuer: options.issuer,
    audience: options.audience,
    jwks: () => ({ keys: keys.map((key) => key.jwk) }),
    sign: (claims, now) => {
      const iat = Math.floor(now.getTime() / 1000);
      return new SignJWT({ ...claims })
        .setProtectedHeader({ alg: current.alg, kid: current.kid, typ: 'at+jwt' })
        .setIssuer(options.issuer)
        .setAudience(options.audience)
        .setIssuedAt(iat)
        .setExpirationTime(iat + ACCESS_TOKEN_SECONDS)
        .setJti(randomUUID())
        .sign(current.privateKey);
    },
    async verify(token, now) {
      try {
        const { payload } = await jwtVerify(token, keySet, {
          issuer: options.issuer,
          audience: options.audience,
          algorithms,
          typ: 'at+jwt',
          currentDate: now,
          requiredClaims: ['exp', 'sub', 'client_id', 'project_id', 'grant_id', 'scope'],
        });
        const claims = payload as unknown as AccessClaims & { exp: number };
        return typeof claims.grant_id === 'string' && typeof claims.project_id === 'string'
          ? claims
          : undefined;
      } catch {
        return undefined;
      }
    },
  };
}

export const parseScope = (scope: string | undefined) => (scope ?? '').split(' ').filter(Boolean);
