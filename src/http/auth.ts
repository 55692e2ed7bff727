import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../errors.ts';
import type { KeyVerifier, Principal } from '../platform/keys.ts';

/**
 * How a route is reached, set per route as `config: { auth }`:
 * - project: a project key (the default for every route)
 * - ingest: an ingest key (/v1/ingest/*)
 * - optional: public, but a valid project key makes the caller a member (delivery landing read)
 * - public: no credential looked at
 * A presented key that is not valid is a 401 everywhere except on public routes.
 */
export type AuthMode = 'project' | 'ingest' | 'optional' | 'public';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
    /** US cents a keyless caller pays for the route; set by the x402 plugin when payments are on. */
    price?: number;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyInstance {
    /**
     * Lets an in-process request (`app.inject`) act as an already verified principal: the MCP
     * tools call the REST routes this way (docs/agents.md). The header value holds a secret of
     * the process and is single-use, so no outside request can present it.
     */
    delegate(principal: Principal): { headers: Record<string, string>; release(): void };
    /**
     * True for a request made through `delegate` (from its arrival to its end): it was counted,
     * authenticated and logged as its MCP call.
     */
    isDelegated(request: FastifyRequest): boolean;
  }
}

const DELEGATION_HEADER = 'x-earshot-delegation';

/**
 * Whether the caller presented a credential at all, even an empty or malformed one (`Authorization:
 * Basic …`): such a call takes the credential path and is never offered payment (docs/payments.md).
 */
export function presentsCredential(request: FastifyRequest): boolean {
  const query = request.query as Record<string, unknown> | undefined;
  return (
    request.headers['x-api-key'] !== undefined ||
    request.headers.authorization !== undefined ||
    query?.['api-key'] !== undefined
  );
}

export function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  if (typeof header === 'string' && header) return header.trim();
  const authorization = request.headers.authorization;
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) return match[1];
  }
  const query = request.query as Record<string, unknown> | undefined;
  const fromQuery = query?.['api-key'];
  return typeof fromQuery === 'string' && fromQuery ? fromQuery : undefined;
}

/** One `delegate` call: its header, and `release` once its request is over (a class, not a closure per call). */
class Delegation {
  readonly headers: Record<string, string>;
  constructor(
    private readonly delegations: Map<string, Principal>,
    private readonly token: string,
  ) {
    this.headers = { [DELEGATION_HEADER]: token };
  }
  release() {
    this.delegations.delete(this.token);
  }
}

async function authPlugin(app: FastifyInstance, options: { keys: KeyVerifier }) {
  app.decorateRequest('principal', null);
  const delegations = new Map<string, Principal>();
  // Requests that presented a delegation: it is spent on arrival, the request stays delegated.
  const delegatedRequests = new WeakSet<FastifyRequest>();
  const secret = randomBytes(24).toString('base64url');
  let issued = 0;
  app.decorate('delegate', (principal: Principal) => {
    const token = `${secret}.${++issued}`;
    delegations.set(token, principal);
    return new Delegation(delegations, token);
  });
  app.decorate('isDelegated', (request: FastifyRequest) => {
    if (delegatedRequests.has(request)) return true;
    const delegation = request.headers[DELEGATION_HEADER];
    return typeof delegation === 'string' && delegations.has(delegation);
  });
  app.addHook('onRequest', async (request) => {
    const delegation = request.headers[DELEGATION_HEADER];
    const delegated = typeof delegation === 'string' ? delegations.get(delegation) : undefined;
    if (typeof delegation === 'string') delegations.delete(delegation);
    if (delegation !== undefined && !delegated) throw new UnauthorizedError();
    if (delegated) delegatedRequests.add(request);
    // Every matched route needs a project key unless it says otherwise; only an unmatched URL
    // (a 404) is public. Never decided from the raw URL: the router decodes %76 to v.
    const mode: AuthMode =
      request.routeOptions.config?.auth ?? (request.routeOptions.url ? 'project' : 'public');
    if (mode === 'public') return;
    const key = delegated ? undefined : presentedKey(request);
    const priced = request.routeOptions.config?.price !== undefined;
    if (!key && !delegated) {
      // A keyless call of a priced route is the x402 plugin's to charge (docs/payments.md).
      if (mode === 'optional' || (priced && !presentsCredential(request))) return;
      throw new UnauthorizedError();
    }
    if (delegated?.kind === 'payer') {
      if (!priced)
        throw new UnauthorizedError(
          'unauthorized',
          'This operation needs an API key; it cannot be paid per request.',
        );
      request.principal = delegated;
      return;
    }
    const principal = delegated ?? (await options.keys.verify(key!));
    if (!principal && key?.split('.').length === 3)
      throw new UnauthorizedError(
        'unauthorized',
        'OAuth access tokens are accepted by the MCP server only; REST needs an API key.',
      );
    if (!principal)
      throw new UnauthorizedError('unauthorized', 'The API key is not valid or has been revoked.');
    if (mode === 'ingest' && principal.kind !== 'ingest')
      throw new ForbiddenError('ingest_key_required', 'Ingestion needs an ingest key.');
    if (mode !== 'ingest' && principal.kind !== 'project') {
      if (mode === 'optional') return;
      throw new ForbiddenError('project_key_required', 'Ingest keys reach /v1/ingest/* only.');
    }
    request.principal = principal;
  });
}

export const auth = fp(authPlugin, { name: 'earshot-auth' });

/** The principal of a keyless call paid per request (or of a free MCP call: no payer). */
export const payerPrincipal = (payer: string | undefined): Principal => ({
  keyId: `x402:${payer ?? 'anonymous'}`,
  kind: 'payer',
  projectId: null,
  organizationId: null,
});

/**
 * Whose work a request is, for limits of work in flight: the project of a project key (an MCP
 * tool's call acts as its caller's project), else an x402 payer's address, in lower case (one
 * wallet, however its address is spelled). Throws 401 when there is neither.
 */
export function workKey(request: FastifyRequest): string {
  const principal = request.principal;
  if (principal?.kind === 'payer') return principal.keyId.toLowerCase();
  if (principal?.projectId) return `project:${principal.projectId}`;
  throw new UnauthorizedError();
}

/** The caller's project key; for routes whose mode guarantees one. */
export function callerOf(request: FastifyRequest): Principal & { projectId: string; organizationId: string } {
  const principal = request.principal;
  if (!principal?.projectId || !principal.organizationId) throw new UnauthorizedError();
  return principal as Principal & { projectId: string; organizationId: string };
}

/** Project-scoped paths: a key of another project gets 403. */
export function assertProjectAccess(request: FastifyRequest, projectId: string) {
  if (callerOf(request).projectId !== projectId)
    throw new ForbiddenError('project_forbidden', 'This API key is bound to another project.');
}

/** Resources addressed by id: another project's resource is reported as missing (no existence leak). */
export function assertOwned(request: FastifyRequest, ownerProjectId: string | undefined, what = 'Resource') {
  if (!ownerProjectId || callerOf(request).projectId !== ownerProjectId)
    throw new NotFoundError('not_found', `${what} not found.`);
}

/** True when the caller is a member of the project (a valid key of it); for optional-auth routes. */
export const isMember = (request: FastifyRequest, projectId: string) =>
  request.principal?.projectId === projectId;
