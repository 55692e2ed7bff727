import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../db/db.ts';
import type { KeyVerifier } from '../../platform/keys.ts';
import {
  type ClientMetadataResolver,
  clientIdHost,
  HIDDEN_CHARACTER,
  isMetadataClientId,
  validRedirectUri,
} from './client-metadata.ts';
import { renderConsentPage, renderErrorPage } from './consent-page.ts';
import {
  type ClientAuthMethod,
  deleteExpiredCodes,
  deleteExpiredRefreshTokens,
  findClient,
  findGrant,
  type Grant,
  grantOfRefreshToken,
  insertClient,
  insertCode,
  insertGrant,
  insertRefreshToken,
  lockCode,
  lockRefreshToken,
  type MetadataDocumentClient,
  markCodeUsed,
  markRefreshTokenUsed,
  type OAuthClient,
  refreshMetadataClient,
  revokeGrant,
  secretMatches,
  upsertMetadataClient,
} from './store.ts';
import {
  ACCESS_TOKEN_SECONDS,
  CODE_SECONDS,
  parseScope,
  REFRESH_TOKEN_SECONDS,
  SCOPES,
  type TokenIssuer,
} from './tokens.ts';

export interface OAuthDeps {
  db: Db;
  keys: KeyVerifier;
  tokens: TokenIssuer;
  publicBaseUrl: string;
  /** Signs the consent form's CSRF token. */
  csrfKey: Buffer;
  /** Fetches and caches client metadata documents (src/agents/oauth/client-metadata.ts). */
  clientMetadata: ClientMetadataResolver;
  now(): Date;
}

const DEFAULT_SCOPE = 'mcp:read';
const CSRF_COOKIE = 'earshot_oauth_csrf';
const AUTH_METHODS: ClientAuthMethod[] = ['none', 'client_secret_basic', 'client_secret_post'];
const AUTHORIZATION_FIELDS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
  'resource',
] as const;

type Fields = Record<string, string | undefined>;

/** An RFC 6749 error body that is also a problem document (error_code = error). */
function oauthError(reply: FastifyReply, status: number, error: string, description: string) {
  return reply.code(status).header('cache-control', 'no-store').type('application/json').send({
    error,
    error_description: description,
    type: 'about:blank',
    title: STATUS_CODES[status],
    status,
    detail: description,
    error_code: error,
    errors: null,
  });
}

const stringFields = (body: unknown): Fields =>
  Object.fromEntries(
    Object.entries(body && typeof body === 'object' ? body : {}).filter(([, v]) => typeof v === 'string'),
  ) as Fields;

/** A metadata document's client as the routes use it: public, its row kept by upsertMetadataClient. */
const documentClient = (client: MetadataDocumentClient): OAuthClient => ({
  id: client.id,
  kind: 'metadata_document',
  name: client.name,
  redirectUris: client.redirectUris,
  authMethod: 'none',
  secretSha256: null,
  clientUri: client.clientUri,
  logoUri: client.logoUri,
  metadataFetchedAt: client.fetchedAt,
  createdAt: client.fetchedAt,
});

/**
 * A form-urlencoded Basic credential (RFC 6749 §2.3.1) decoded; undefined when malformed, or when
 * it holds a NUL, which no client id or secret has and PostgreSQL text cannot hold.
 */
function decodedOrUndefined(text: string) {
  try {
    const decoded = decodeURIComponent(text);
    return decoded.includes('\u0000') ? undefined : decoded;
  } catch {
    return undefined;
  }
}

function cookieOf(request: FastifyRequest, name: string) {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

/** The authorization server (docs/agents.md): metadata, JWKS, registration, authorize, token, revoke. */
export function oauthRoutes(deps: OAuthDeps) {
  const base = deps.publicBaseUrl;
  const mcpUrl = `${base}/mcp`;
  const endpoints = {
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    registration_endpoint: `${base}/oauth/register`,
    revocation_endpoint: `${base}/oauth/revoke`,
    jwks_uri: `${base}/.well-known/jwks.json`,
  };
  const csrfOf = (nonce: string, fields: Fields) =>
    createHmac('sha256', deps.csrfKey)
      .update(JSON.stringify([nonce, ...AUTHORIZATION_FIELDS.map((name) => fields[name] ?? '')]))
      .digest('base64url');

  return async function routes(app: FastifyInstance) {
    const open = { config: { auth: 'public' as const } };
    const hidden = { ...open, schema: { hide: true } };

    const protectedResource = {
      resource: mcpUrl,
      authorization_servers: [base],
      scopes_supported: SCOPES,
      bearer_methods_supported: ['header'],
      resource_name: 'earshot MCP server',
      resource_documentation: `${base}/llms.txt`,
    };
    app.get('/.well-known/oauth-protected-resource', hidden, async () => protectedResource);
    app.get('/.well-known/oauth-protected-resource/mcp', hidden, async () => protectedResource);
    app.get('/.well-known/oauth-authorization-server', hidden, async () => ({
      issuer: base,
      ...endpoints,
      scopes_supported: SCOPES,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: AUTH_METHODS,
      revocation_endpoint_auth_methods_supported: AUTH_METHODS,
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
      agent_auth: {
        resource: mcpUrl,
        flow: 'authorization_code with PKCE S256; resource must be the MCP URL',
        steps: [
          `discover: GET ${base}/.well-known/oauth-protected-resource`,
          `register: POST ${endpoints.registration_endpoint} (RFC 7591), or use the https URL of a client metadata document as client_id (token_endpoint_auth_method none)`,
          `authorize: GET ${endpoints.authorization_endpoint}; a human signs in with a project API key and approves`,
          `token: POST ${endpoints.token_endpoint}`,
          `revoke: POST ${endpoints.revocation_endpoint} (RFC 7009)`,
        ],
        scopes: {
          'mcp:read': 'every read tool',
          'mcp:write': 'tools that change state (earshot_alert_create)',
        },
        access_token: {
          format: 'JWT',
          lifetime_seconds: ACCESS_TOKEN_SECONDS,
          audience: mcpUrl,
          accepted_by: 'MCP only',
        },
        refresh_token: {
          lifetime_seconds: REFRESH_TOKEN_SECONDS,
          rotation: 'on every use; a replay revokes the grant',
        },
        api_keys:
          'headless agents may present a project API key instead (Authorization: Bearer or X-API-Key)',
      },
    }));
    app.get('/.well-known/jwks.json', hidden, async () => deps.tokens.jwks());

    app.post('/oauth/register', hidden, async (request, reply) => {
      const body = (request.body ?? {}) as Record<string, unknown>;
      const uris = body.redirect_uris;
      if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10 || !uris.every(validRedirectUri))
        return oauthError(
          reply,
          400,
          'invalid_redirect_uri',
          'redirect_uris must list 1 to 10 absolute URIs: https, http on a loopback host, or a private-use scheme; no fragment.',
        );
      const method = body.token_endpoint_auth_method ?? 'client_secret_basic';
      if (!AUTH_METHODS.includes(method as ClientAuthMethod))
        return oauthError(
          reply,
          400,
          'invalid_client_metadata',
          `token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}.`,
        );
      const grantTypes = body.grant_types ?? ['authorization_code'];
      if (
        !Array.isArray(grantTypes) ||
        !grantTypes.every((t) => t === 'authorization_code' || t === 'refresh_token')
      )
        return oauthError(
          reply,
          400,
          'invalid_client_metadata',
          'grant_types may hold authorization_code and refresh_token only.',
        );
      const responseTypes = body.response_types ?? ['code'];
      if (!Array.isArray(responseTypes) || !responseTypes.every((t) => t === 'code'))
        return oauthError(reply, 400, 'invalid_client_metadata', 'response_types may hold code only.');
      if (typeof body.client_name === 'string' && HIDDEN_CHARACTER.test(body.client_name))
        return oauthError(
          reply,
          400,
          'invalid_client_metadata',
          'client_name may not hold control, format (bidirectional overrides, invisible marks) or line separator characters.',
        );
      const name =
        typeof body.client_name === 'string' && body.client_name.trim()
          ? body.client_name.trim().slice(0, 100)
          : 'Unnamed application';
      const { client, secret } = await insertClient(deps.db, {
        name,
        redirectUris: uris as string[],
        authMethod: method as ClientAuthMethod,
      });
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({
          client_id: client.id,
          client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
          ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
          client_name: client.name,
          redirect_uris: client.redirectUris,
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: client.authMethod,
        });
    });

    type Checked =
      | { kind: 'page'; title: string; detail: string }
      | { kind: 'redirect'; url: string }
      | { kind: 'ok'; client: OAuthClient; redirectUri: string; scopes: string[]; fields: Fields };

    const redirectWith = (redirectUri: string, params: Record<string, string | undefined>) => {
      const url = new URL(redirectUri);
      for (const [name, value] of Object.entries(params))
        if (value !== undefined) url.searchParams.set(name, value);
      url.searchParams.set('iss', base);
      return url.toString();
    };

    /** The checks of RFC 6749 §4.1.2.1: errors before the redirect URI is trusted are shown, not redirected. */
    async function checkAuthorization(fields: Fields): Promise<Checked> {
      const { client, reason } = fields.client_id ? await clientOf(fields.client_id) : {};
      if (reason !== undefined)
        return {
          kind: 'page',
          title: 'Application could not be verified',
          detail: `invalid_client: ${reason}`,
        };
      if (!client)
        return {
          kind: 'page',
          title: 'Unknown application',
          detail: 'client_id names no registered application.',
        };
      const redirectUri =
        fields.redirect_uri ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined);
      if (!redirectUri || !client.redirectUris.includes(redirectUri))
        return {
          kind: 'page',
          title: 'Wrong redirect URI',
          detail:
            client.kind === 'metadata_document'
              ? "invalid_request: redirect_uri is not one of the redirect_uris of the application's client metadata document."
              : 'redirect_uri is not one the application registered.',
        };
      const fail = (error: string, description: string): Checked => ({
        kind: 'redirect',
        url: redirectWith(redirectUri, { error, error_description: description, state: fields.state }),
      });
      if (fields.response_type !== 'code')
        return fail('unsupported_response_type', 'response_type must be code.');
      if (!fields.code_challenge)
        return fail(
          'invalid_request',
          'PKCE is required: send code_challenge with code_challenge_method=S256.',
        );
      if (fields.code_challenge_method !== 'S256')
        return fail('invalid_request', 'code_challenge_method must be S256.');
      if (!/^[A-Za-z0-9_-]{43}$/.test(fields.code_challenge))
        return fail('invalid_request', 'code_challenge must be a base64url SHA-256 digest.');
      if (fields.resource !== mcpUrl) return fail('invalid_target', `resource must be ${mcpUrl}.`);
      const scopes = parseScope(fields.scope ?? DEFAULT_SCOPE);
      const unknown = scopes.filter((scope) => !(SCOPES as readonly string[]).includes(scope));
      if (unknown.length || scopes.length === 0)
        return fail('invalid_scope', `Unknown scope ${unknown.join(' ')}; use mcp:read and mcp:write.`);
      return {
        kind: 'ok',
        client,
        redirectUri,
        scopes: [...new Set(scopes)],
        fields: { ...fields, redirect_uri: redirectUri, scope: [...new Set(scopes)].join(' ') },
      };
    }

    function secureHeaders(reply: FastifyReply, redirectUri?: string) {
      const formTargets = redirectUri ? ` ${new URL(redirectUri).origin}` : '';
      return reply
        .header('cache-control', 'no-store')
        .header('x-frame-options', 'DENY')
        .header('referrer-policy', 'no-referrer')
        .header(
          'content-security-policy',
          `default-src 'none'; style-src 'unsafe-inline'; form-action 'self'${formTargets}; frame-ancestors 'none'; base-uri 'none'`,
        )
        .type('text/html; charset=utf-8');
    }

    function showConsent(
      reply: FastifyReply,
      checked: Extract<Checked, { kind: 'ok' }>,
      nonce: string,
      status = 200,
      error?: string,
    ) {
      const fields = Object.fromEntries(
        AUTHORIZATION_FIELDS.flatMap((name) =>
          checked.fields[name] === undefined ? [] : [[name, checked.fields[name]!]],
        ),
      );
      const secure = base.startsWith('https:') ? '; Secure' : '';
      return secureHeaders(reply, checked.redirectUri)
        .code(status)
        .header(
          'set-cookie',
          `${CSRF_COOKIE}=${nonce}; Path=/oauth; HttpOnly; SameSite=Strict; Max-Age=900${secure}`,
        )
        .send(
          renderConsentPage({
            clientName: checked.client.name,
            ...(checked.client.kind === 'metadata_document' && {
              clientIdHost: clientIdHost(checked.client.id),
              // MCP authorization, Localhost Redirect URI Risks: anyone can present this
              // client_id with a loopback redirect, so the page warns (docs/agents.md).
              deviceRedirect: new URL(checked.redirectUri).protocol !== 'https:',
            }),
            redirectUri: checked.redirectUri,
            scopes: checked.scopes,
            fields: { ...fields, csrf: csrfOf(nonce, checked.fields) },
            ...(error ? { error } : {}),
          }),
        );
    }

    async function answer(reply: FastifyReply, checked: Checked) {
      if (checked.kind === 'page')
        return secureHeaders(reply).code(400).send(renderErrorPage(checked.title, checked.detail));
      if (checked.kind === 'redirect')
        return reply.header('cache-control', 'no-store').redirect(checked.url, 302);
      return undefined;
    }

    app.get<{ Querystring: Fields }>('/oauth/authorize', hidden, async (request, reply) => {
      const checked = await checkAuthorization(stringFields(request.query));
      if (checked.kind !== 'ok') return answer(reply, checked);
      return showConsent(reply, checked, randomBytes(24).toString('base64url'));
    });

    app.post('/oauth/authorize', hidden, async (request, reply) => {
      const form = stringFields(request.body);
      const checked = await checkAuthorization(form);
      if (checked.kind !== 'ok') return answer(reply, checked);
      const nonce = cookieOf(request, CSRF_COOKIE);
      const expected = nonce ? Buffer.from(csrfOf(nonce, checked.fields)) : undefined;
      const given = Buffer.from(form.csrf ?? '');
      if (!nonce || !expected || expected.length !== given.length || !timingSafeEqual(expected, given))
        return secureHeaders(reply)
          .code(403)
          .send(
            renderErrorPage(
              'Form expired',
              'This consent form is no longer valid. Start again from the application.',
            ),
          );
      if (form.decision !== 'approve')
        return answer(reply, {
          kind: 'redirect',
          url: redirectWith(checked.redirectUri, {
            error: 'access_denied',
            error_description: 'The request was denied.',
            state: form.state,
          }),
        });
      const principal = form.api_key ? await deps.keys.verify(form.api_key.trim()) : null;
      if (principal?.kind !== 'project' || !principal.projectId)
        return showConsent(reply, checked, nonce, 401, 'That is not a valid project API key.');
      const now = deps.now();
      await deleteExpiredCodes(deps.db, now);
      const client = checked.client;
      // A metadata-document client gets its row now: codes and grants reference it.
      if (client.kind === 'metadata_document')
        await upsertMetadataClient(deps.db, {
          id: client.id,
          name: client.name,
          redirectUris: client.redirectUris,
          clientUri: client.clientUri,
          logoUri: client.logoUri,
          fetchedAt: client.metadataFetchedAt ?? now,
        });
      const code = await insertCode(
        deps.db,
        {
          clientId: checked.client.id,
          projectId: principal.projectId,
          approvedByKeyId: principal.keyId,
          redirectUri: checked.redirectUri,
          scope: checked.fields.scope!,
          codeChallenge: checked.fields.code_challenge!,
        },
        new Date(now.getTime() + CODE_SECONDS * 1000),
      );
      return reply
        .header('cache-control', 'no-store')
        .header('set-cookie', `${CSRF_COOKIE}=; Path=/oauth; HttpOnly; SameSite=Strict; Max-Age=0`)
        .redirect(redirectWith(checked.redirectUri, { code, state: form.state }), 302);
    });

    /**
     * The client a client_id names. A metadata document URL is resolved (cache, else fetched); when
     * `storedFallback`, a client whose document cannot be had right now is taken from its row, so
     * that revoking a token never depends on the client's web server.
     */
    async function clientOf(
      id: string,
      storedFallback = false,
    ): Promise<{ client?: OAuthClient; reason?: string; busy?: boolean }> {
      if (!isMetadataClientId(id)) {
        const client = await findClient(deps.db, id);
        return client ? { client } : {};
      }
      const resolved = await deps.clientMetadata.resolve(id);
      if (resolved.ok) {
        if (resolved.fetched) await refreshMetadataClient(deps.db, resolved.client);
        return { client: documentClient(resolved.client) };
      }
      const stored = storedFallback ? await findClient(deps.db, id) : undefined;
      if (stored?.kind === 'metadata_document') return { client: stored };
      return { reason: resolved.message, ...(resolved.busy && { busy: true }) };
    }

    /**
     * RFC 6749 §2.3: Basic, or client_id (+ client_secret) in the form, as the client registered.
     * `basic` says the client tried Basic: its 401 then carries `WWW-Authenticate: Basic` (§5.2).
     * A metadata-document client is always public (`none`).
     */
    async function authenticateClient(
      request: FastifyRequest,
      form: Fields,
      storedFallback = false,
    ): Promise<{ client?: OAuthClient; basic: boolean; reason?: string; busy?: boolean }> {
      const authorization = request.headers.authorization ?? '';
      const basic = /^Basic(?:\s|$)/i.test(authorization);
      let id = form.client_id;
      let secret = form.client_secret;
      let method: ClientAuthMethod = secret ? 'client_secret_post' : 'none';
      if (basic) {
        const credentials = /^Basic\s+(\S+)$/i.exec(authorization)?.[1];
        const [user, ...password] = Buffer.from(credentials ?? '', 'base64')
          .toString('utf8')
          .split(':');
        id = decodedOrUndefined(user ?? '');
        secret = decodedOrUndefined(password.join(':'));
        method = 'client_secret_basic';
      }
      const { client, reason, busy } = id ? await clientOf(id, storedFallback) : {};
      if (!client) return { basic, ...(reason && { reason }), ...(busy && { busy }) };
      if (client.authMethod !== method) return { basic };
      if (method !== 'none' && (secret === undefined || !secretMatches(client, secret))) return { basic };
      return { client, basic };
    }

    /**
     * The 401 of a failed client authentication (RFC 6749 §5.2). When earshot's own bound on
     * document fetches refused the lookup (`busy`), nothing is known against the client: a 503
     * `temporarily_unavailable` with Retry-After, so that an SDK does not drop its credentials
     * because strangers keep earshot's fetches busy.
     */
    function invalidClient(reply: FastifyReply, basic: boolean, reason?: string, busy?: boolean) {
      if (busy)
        return oauthError(reply.header('retry-after', '1'), 503, 'temporarily_unavailable', reason ?? '');
      if (basic) reply.header('www-authenticate', 'Basic realm="oauth"');
      return oauthError(reply, 401, 'invalid_client', reason ?? 'Client authentication failed.');
    }

    async function issue(
      grant: {
        id: string;
        clientId: string;
        projectId: string;
        organizationId: string;
        approvedByKeyId: string;
        scope: string;
      },
      refreshToken: string,
    ) {
      const now = deps.now();
      const accessToken = await deps.tokens.sign(
        {
          sub: grant.approvedByKeyId,
          client_id: grant.clientId,
          project_id: grant.projectId,
          organization_id: grant.organizationId,
          grant_id: grant.id,
          scope: grant.scope,
        },
        now,
      );
      return {
        access_token: accessToken,
        token_type: 'Bearer',
        expires_in: ACCESS_TOKEN_SECONDS,
        refresh_token: refreshToken,
        scope: grant.scope,
      };
    }

    app.post('/oauth/token', hidden, async (request, reply) => {
      const form = stringFields(request.body);
      const { client, basic, reason, busy } = await authenticateClient(request, form);
      if (!client) return invalidClient(reply, basic, reason, busy);
      if (form.resource !== undefined && form.resource !== mcpUrl)
        return oauthError(reply, 400, 'invalid_target', `resource must be ${mcpUrl}.`);
      const now = deps.now();
      const refreshExpiry = new Date(now.getTime() + REFRESH_TOKEN_SECONDS * 1000);
      await deleteExpiredRefreshTokens(deps.db, now);

      if (form.grant_type === 'authorization_code') {
        if (!form.code || !form.code_verifier)
          return oauthError(reply, 400, 'invalid_request', 'code and code_verifier are required.');
        const code = form.code;
        const verifier = form.code_verifier;
        const outcome = await deps.db.transaction<
          { error: string } | { grantId: string; refreshToken: string }
        >(async (tx) => {
          const stored = await lockCode(tx, code);
          if (!stored || stored.clientId !== client.id) return { error: 'The code is not valid.' };
          if (stored.grantId) {
            // RFC 9700 §4.2.4 / OAuth 2.1: a replayed code revokes what it issued.
            await revokeGrant(tx, stored.grantId, 'code_reuse', now);
            return { error: 'The code was already used; the grant it started is revoked.' };
          }
          if (stored.expiresAt <= now) return { error: 'The code has expired.' };
          if (form.redirect_uri !== undefined && form.redirect_uri !== stored.redirectUri)
            return { error: 'redirect_uri does not match the authorization request.' };
          const challenge = createHash('sha256').update(verifier).digest('base64url');
          if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier) || challenge !== stored.codeChallenge)
            return { error: 'code_verifier does not match the code_challenge.' };
          const grantId = await insertGrant(tx, { ...stored, now });
          await markCodeUsed(tx, code, grantId);
          return { grantId, refreshToken: await insertRefreshToken(tx, grantId, refreshExpiry) };
        });
        if ('error' in outcome) return oauthError(reply, 400, 'invalid_grant', outcome.error);
        const grant = await findGrant(deps.db, outcome.grantId);
        return reply.header('cache-control', 'no-store').send(await issue(grant!, outcome.refreshToken));
      }

      if (form.grant_type === 'refresh_token') {
        if (!form.refresh_token)
          return oauthError(reply, 400, 'invalid_request', 'refresh_token is required.');
        const presented = form.refresh_token;
        // Checked before it is spent: a refused refresh leaves the token usable (docs/agents.md).
        const outcome = await deps.db.transaction<
          { error: string; description: string } | { grant: Grant; refreshToken: string; scope: string }
        >(async (tx) => {
          const invalid = (description: string) => ({ error: 'invalid_grant', description });
          const stored = await lockRefreshToken(tx, presented);
          const grant = stored ? await findGrant(tx, stored.grantId) : undefined;
          if (!stored || !grant || grant.clientId !== client.id)
            return invalid('The refresh token is not valid.');
          if (stored.usedAt) {
            await revokeGrant(tx, grant.id, 'refresh_token_replay', now);
            return invalid('The refresh token was already used; the grant is revoked.');
          }
          if (grant.revokedAt) return invalid('The grant has been revoked.');
          if (stored.expiresAt <= now) return invalid('The refresh token has expired.');
          const granted = parseScope(grant.scope);
          const requested = form.scope === undefined ? granted : parseScope(form.scope);
          if (!requested.every((scope) => granted.includes(scope)))
            return {
              error: 'invalid_scope',
              description: 'A refresh may only narrow the granted scope.',
            };
          await markRefreshTokenUsed(tx, presented, now);
          return {
            grant,
            refreshToken: await insertRefreshToken(tx, grant.id, refreshExpiry),
            scope: requested.join(' '),
          };
        });
        if ('error' in outcome) return oauthError(reply, 400, outcome.error, outcome.description);
        return reply
          .header('cache-control', 'no-store')
          .send(await issue({ ...outcome.grant, scope: outcome.scope }, outcome.refreshToken));
      }
      return oauthError(
        reply,
        400,
        'unsupported_grant_type',
        'grant_type must be authorization_code or refresh_token.',
      );
    });

    app.post('/oauth/revoke', hidden, async (request, reply) => {
      const form = stringFields(request.body);
      const { client, basic, reason, busy } = await authenticateClient(request, form, true);
      if (!client) return invalidClient(reply, basic, reason, busy);
      if (!form.token) return oauthError(reply, 400, 'invalid_request', 'token is required.');
      const claims = await deps.tokens.verify(form.token, deps.now());
      const grantId = claims?.grant_id ?? (await grantOfRefreshToken(deps.db, form.token));
      const grant = grantId ? await findGrant(deps.db, grantId) : undefined;
      // RFC 7009 §2.2: an unknown or foreign token is answered 200 all the same.
      if (grant && grant.clientId === client.id)
        await revokeGrant(deps.db, grant.id, 'revoked_by_client', deps.now());
      return reply.header('cache-control', 'no-store').code(200).send({});
    });
  };
}
