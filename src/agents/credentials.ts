import type { FastifyRequest } from 'fastify';
import type { Db } from '../db/db.ts';
import { ForbiddenError } from '../errors.ts';
import { KEY_PREFIX, type KeyVerifier, type Principal } from '../platform/keys.ts';
import { findGrant } from './oauth/store.ts';
import { type AccessClaims, parseScope, SCOPES, type Scope, type TokenIssuer } from './oauth/tokens.ts';

/** Who calls the MCP server: a project API key (every scope) or an OAuth grant (its scopes). */
export interface AgentCaller {
  principal: Principal & { projectId: string; organizationId: string };
  /** x402: a keyless call the payment plugin let through, paid or free (docs/payments.md). */
  via: 'api_key' | 'oauth' | 'x402';
  scopes: readonly Scope[];
  grantId?: string;
  clientId?: string;
}

/** The 401 (and keyless 402) pointer to the OAuth discovery document. */
export const mcpChallenge = (publicBaseUrl: string) =>
  `Bearer realm="mcp", error="invalid_token", resource_metadata="${publicBaseUrl}/.well-known/oauth-protected-resource"`;

/** A keyless call: read-only and bound to no project, so project-scoped tools still need a credential. */
function keylessCaller(request: FastifyRequest): AgentCaller | undefined {
  const principal = request.principal;
  if (principal?.kind !== 'payer') return undefined;
  return {
    principal: { ...principal, projectId: '', organizationId: '' },
    via: 'x402',
    scopes: ['mcp:read'],
  };
}

/** MCP takes headers only: X-API-Key, or Authorization: Bearer with a key or an access token. */
function presentedCredential(request: FastifyRequest) {
  const header = request.headers['x-api-key'];
  if (typeof header === 'string' && header) return header.trim();
  return /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
}

/** The MCP credential check: undefined means 401 with the discovery pointer. */
export function createAgentCredentials(deps: {
  db: Db;
  keys: KeyVerifier;
  tokens: TokenIssuer;
  now(): Date;
  /** How long a grant's revocation may take to reach this process; default 5 s. */
  grantCacheMs?: number;
}) {
  const grants = new Map<string, { revoked: boolean; until: number }>();
  const cacheMs = deps.grantCacheMs ?? 5_000;
  // A verified access token, until it expires or for cacheMs: an agent presents the same token on
  // every call, and a signature check costs more than the rest of the credential check.
  const verified = new Map<string, { claims: AccessClaims & { exp: number }; until: number }>();

  async function verifiedClaims(token: string) {
    const now = deps.now().getTime();
    const cached = verified.get(token);
    if (cached && cached.until > now) return cached.claims;
    const claims = await deps.tokens.verify(token, deps.now());
    if (!claims) return undefined;
    if (verified.size >= 10_000) verified.clear();
    verified.set(token, { claims, until: Math.min(now + cacheMs, claims.exp * 1000) });
    return claims;
  }

  async function grantRevoked(id: string) {
    const now = deps.now().getTime();
    const cached = grants.get(id);
    if (cached && cached.until > now) return cached.revoked;
    const grant = await findGrant(deps.db, id);
    const revoked = !grant || grant.revokedAt !== null;
    if (grants.size >= 10_000) grants.clear();
    grants.set(id, { revoked, until: now + cacheMs });
    return revoked;
  }

  return async function callerOf(request: FastifyRequest): Promise<AgentCaller | undefined> {
    const presented = presentedCredential(request);
    if (!presented) return keylessCaller(request);
    if (presented.startsWith(KEY_PREFIX)) {
      const principal = await deps.keys.verify(presented);
      if (!principal) return undefined;
      if (principal.kind !== 'project' || !principal.projectId || !principal.organizationId)
        throw new ForbiddenError('project_key_required', 'Ingest keys reach /v1/ingest/* only.');
      return {
        principal: { ...principal, projectId: principal.projectId, organizationId: principal.organizationId },
        via: 'api_key',
        scopes: SCOPES,
      };
    }
    const claims = await verifiedClaims(presented);
    if (!claims || (await grantRevoked(claims.grant_id))) return undefined;
    return {
      principal: {
        keyId: `grant:${claims.grant_id}`,
        kind: 'project',
        projectId: claims.project_id,
        organizationId: claims.organization_id,
      },
      via: 'oauth',
      scopes: parseScope(claims.scope).filter((s): s is Scope => (SCOPES as readonly string[]).includes(s)),
      grantId: claims.grant_id,
      clientId: claims.client_id,
    };
  };
}
