import { type AddressInfo, createServer } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oauthClients, oauthGrants, oauthRevoke } from '../../src/agents/oauth/admin.ts';
import { findGrant, lockRefreshToken, revokeGrant } from '../../src/agents/oauth/store.ts';
import { verifyEmail } from '../../src/platform/organizations.ts';
import { ENTITY, seedEntity } from '../alerts/support.ts';
import { createTenant } from '../support/platform.ts';
import {
  type AgentsHarness,
  agentsHarness,
  type DocumentServer,
  mcpPost,
  startDocumentServer,
} from './support.ts';

const insecure = { [oauth.allowInsecureRequests]: true } as const;
const REDIRECT = 'http://127.0.0.1:9/callback';

let h: AgentsHarness;
let as: oauth.AuthorizationServer;
let client: oauth.Client;

beforeAll(async () => {
  h = await agentsHarness();
  await seedEntity(h.db);
});
afterAll(() => h.close());

/** The consent form's fields and the CSRF cookie, from a GET of the authorization URL. */
async function consentForm(url: URL) {
  const page = await fetch(url, { redirect: 'manual' });
  const html = await page.text();
  const fields = Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [
      m[1]!,
      m[2]!.replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', "'"),
    ]),
  );
  const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0]!;
  return { page, html, fields, cookie };
}

/** Posts the consent form as a browser would: urlencoded, with the cookie. */
function submitConsent(
  form: { fields: Record<string, string>; cookie: string },
  extra: Record<string, string>,
) {
  return fetch(`${h.url}/oauth/authorize`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.cookie },
    body: new URLSearchParams({ ...form.fields, ...extra }),
  });
}

function authorizationUrl(parameters: Record<string, string | undefined>) {
  const url = new URL(as.authorization_endpoint!);
  for (const [name, value] of Object.entries(parameters))
    if (value !== undefined) url.searchParams.set(name, value);
  return url;
}

/** A PKCE authorization through the consent form: the callback's parameters and the verifier. */
async function authorize(scope = 'mcp:read mcp:write', forClient = client) {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const form = await consentForm(
    authorizationUrl({
      response_type: 'code',
      client_id: forClient.client_id,
      redirect_uri: REDIRECT,
      scope,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      resource: h.mcpUrl,
    }),
  );
  expect(form.page.status).toBe(200);
  const approved = await submitConsent(form, { api_key: h.tenant.key, decision: 'approve' });
  expect(approved.status).toBe(302);
  const params = oauth.validateAuthResponse(as, forClient, new URL(approved.headers.get('location')!), state);
  return { params, verifier };
}

async function exchange(params: URLSearchParams, verifier: string) {
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.None(),
    params,
    REDIRECT,
    verifier,
    {
      additionalParameters: { resource: h.mcpUrl },
      ...insecure,
    },
  );
  return oauth.processAuthorizationCodeResponse(as, client, response);
}

async function refresh(refreshToken: string) {
  return oauth.processRefreshTokenResponse(
    as,
    client,
    await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshToken, insecure),
  );
}

async function mcpClient(accessToken: string) {
  const mcp = new Client({ name: 'oauth-test-agent', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(h.mcpUrl), {
      requestInit: { headers: { authorization: `Bearer ${accessToken}` } },
    }),
  );
  return mcp;
}

const rpc = (accessToken: string) =>
  fetch(h.mcpUrl, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${accessToken}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });

const oauthErrorOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => (error instanceof oauth.ResponseBodyError ? error.error : String(error)),
  );

/** The grant an access token belongs to (its grant_id claim). */
const grantOf = (accessToken: string) =>
  (JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()) as { grant_id: string })
    .grant_id;

async function registerPublicClient(name: string): Promise<oauth.Client> {
  const registered = await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(
      as,
      { client_name: name, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' },
      insecure,
    ),
  );
  return { client_id: registered.client_id, token_endpoint_auth_method: 'none' };
}

describe('the OAuth flow, driven by oauth4webapi against a listening server', () => {
  it('discovers the authorization server from the MCP 401 and registers a public client', async () => {
    const challenge = await oauth
      .protectedResourceRequest(
        'not-a-token',
        'POST',
        new URL(h.mcpUrl),
        new Headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' }),
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize' }),
        insecure,
      )
      .then(
        () => undefined,
        (error: unknown) => (error as oauth.WWWAuthenticateChallengeError).cause,
      );
    expect(challenge?.[0]).toMatchObject({
      scheme: 'bearer',
      parameters: {
        realm: 'mcp',
        error: 'invalid_token',
        resource_metadata: `${h.url}/.well-known/oauth-protected-resource`,
      },
    });
    const metadataUrl = challenge![0]!.parameters.resource_metadata!;
    const pointed = (await (await fetch(metadataUrl)).json()) as { resource: string };
    expect(pointed.resource).toBe(h.mcpUrl);
    const resource = await oauth.processResourceDiscoveryResponse(
      new URL(h.mcpUrl),
      await oauth.resourceDiscoveryRequest(new URL(h.mcpUrl), insecure),
    );
    const issuer = new URL(resource.authorization_servers![0]!);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
    expect(as.client_id_metadata_document_supported).toBe(true);
    expect((as as unknown as { agent_auth: { resource: string } }).agent_auth.resource).toBe(h.mcpUrl);

    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        {
          client_name: 'Test agent',
          redirect_uris: [REDIRECT],
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code', 'refresh_token'],
        },
        insecure,
      ),
    );
    expect(registered.client_secret).toBeUndefined();
    client = { client_id: registered.client_id, token_endpoint_auth_method: 'none' };
  });

  it('shows the client name, redirect host and scopes on a consent page that sets no-frame headers', async () => {
    const form = await consentForm(
      authorizationUrl({
        response_type: 'code',
        client_id: client.client_id,
        redirect_uri: REDIRECT,
        scope: 'mcp:read mcp:write',
        code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
        code_challenge_method: 'S256',
        resource: h.mcpUrl,
      }),
    );
    expect(form.html).toContain('Test agent wants to use earshot');
    expect(form.html).toContain('<span class="host" id="redirect-host">127.0.0.1:9</span>');
    expect(form.html).toContain('mcp:write');
    expect(form.page.headers.get('x-frame-options')).toBe('DENY');
    expect(form.page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(form.cookie).toMatch(/^earshot_oauth_csrf=/);
    expect(form.page.headers.get('set-cookie')).toContain('SameSite=Strict');
  });

  it('issues a 15-minute JWT for the MCP URL that the SDK client uses, then rotates the refresh token', async () => {
    const { params, verifier } = await authorize();
    const tokens = await exchange(params, verifier);
    expect(tokens.expires_in).toBe(900);
    expect(tokens.scope).toBe('mcp:read mcp:write');
    const claims = await oauth.validateJwtAccessToken(
      as,
      new Request(h.mcpUrl, { headers: { authorization: `Bearer ${tokens.access_token}` } }),
      h.mcpUrl,
      insecure,
    );
    expect(claims).toMatchObject({
      iss: h.url,
      aud: h.mcpUrl,
      client_id: client.client_id,
      project_id: h.tenant.project.id,
      scope: 'mcp:read mcp:write',
    });
    expect(claims.exp - claims.iat).toBe(900);
    expect(claims.grant_id).toMatch(/^og_/);
    expect(claims.sub).toBe(h.tenant.keyId);

    const mcp = await mcpClient(tokens.access_token);
    const created = await mcp.callTool({
      name: 'earshot_alert_create',
      arguments: {
        title: 'Jensen watch',
        entities: [ENTITY],
        notifications: [{ type: 'WEBHOOK', webhook_connection_id: 'none' }],
      },
    });
    // The grant acts for its project: the REST route's own validation answers.
    expect(created.isError).toBe(true);
    expect((created.structuredContent as { error_code: string }).error_code).not.toBe('insufficient_scope');
    const listed = await mcp.callTool({ name: 'earshot_alert_list', arguments: {} });
    expect(listed.isError).toBeFalsy();
    expect(listed.structuredContent).toMatchObject({ data: [], has_more: false });
    await mcp.close();

    const rotated = await refresh(tokens.refresh_token!);
    expect(rotated.refresh_token).not.toBe(tokens.refresh_token);
    expect((await rpc(rotated.access_token)).status).toBe(200);

    // Replaying the spent refresh token revokes the whole grant: the rotated one dies with it.
    expect(await oauthErrorOf(refresh(tokens.refresh_token!))).toBe('invalid_grant');
    expect(await oauthErrorOf(refresh(rotated.refresh_token!))).toBe('invalid_grant');
    const grant = await findGrant(h.db, claims.grant_id as string);
    expect(grant?.revokedReason).toBe('refresh_token_replay');
    h.advance(6_000); // past the 5-second grant cache
    const refused = await rpc(rotated.access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('a refused refresh (a wider scope, another client) leaves the token usable and the grant alive', async () => {
    const { params, verifier } = await authorize('mcp:read');
    const tokens = await exchange(params, verifier);
    const grantId = grantOf(tokens.access_token);
    const wider = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, {
      additionalParameters: { scope: 'mcp:read mcp:write' },
      ...insecure,
    });
    expect(await oauthErrorOf(oauth.processRefreshTokenResponse(as, client, wider))).toBe('invalid_scope');
    const other = await registerPublicClient('Other agent');
    const foreign = await oauth.refreshTokenGrantRequest(
      as,
      other,
      oauth.None(),
      tokens.refresh_token!,
      insecure,
    );
    expect(await oauthErrorOf(oauth.processRefreshTokenResponse(as, other, foreign))).toBe('invalid_grant');
    expect((await findGrant(h.db, grantId))?.revokedAt).toBeNull();

    // The client's retry with the same token is served, and spends it.
    const rotated = await refresh(tokens.refresh_token!);
    expect(rotated.scope).toBe('mcp:read');
    expect((await rpc(rotated.access_token)).status).toBe(200);
    expect(await oauthErrorOf(refresh(tokens.refresh_token!))).toBe('invalid_grant');
    expect((await findGrant(h.db, grantId))?.revokedReason).toBe('refresh_token_replay');
  });

  it('two concurrent refreshes with one token: one is served, the other is a replay that revokes the grant', async () => {
    const { params, verifier } = await authorize('mcp:read');
    const tokens = await exchange(params, verifier);
    const outcomes = await Promise.all([
      oauthErrorOf(refresh(tokens.refresh_token!)),
      oauthErrorOf(refresh(tokens.refresh_token!)),
    ]);
    expect(outcomes.sort()).toEqual(['invalid_grant', undefined]);
    expect((await findGrant(h.db, grantOf(tokens.access_token)))?.revokedReason).toBe('refresh_token_replay');
  });

  it("replays of two of a grant's spent tokens at once wait for each other instead of deadlocking", async () => {
    const { params, verifier } = await authorize('mcp:read');
    const first = await exchange(params, verifier);
    const second = await refresh(first.refresh_token!);
    await refresh(second.refresh_token!);
    const grantId = grantOf(first.access_token);
    // The token endpoint's two steps for a replay, in two transactions interleaved: each locks its
    // token, then revokes the grant (which writes every token of the grant).
    let firstLocked!: () => void;
    const locked = new Promise<void>((resolve) => {
      firstLocked = resolve;
    });
    const replay = (token: string, wait: () => Promise<unknown>) =>
      h.db.transaction(async (tx) => {
        await lockRefreshToken(tx, token);
        await wait();
        await revokeGrant(tx, grantId, 'refresh_token_replay', new Date());
      });
    const outcomes = await Promise.allSettled([
      replay(first.refresh_token!, async () => {
        firstLocked();
        await new Promise((resolve) => setTimeout(resolve, 200));
      }),
      locked.then(() => replay(second.refresh_token!, async () => {})),
    ]);
    expect(outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : o.status))).toEqual([
      'fulfilled',
      'fulfilled',
    ]);
    expect((await findGrant(h.db, grantId))?.revokedReason).toBe('refresh_token_replay');
  });

  it('a read-only grant lists alerts but gets insufficient_scope on a write tool', async () => {
    const { params, verifier } = await authorize('mcp:read');
    const tokens = await exchange(params, verifier);
    const mcp = await mcpClient(tokens.access_token);
    const result = await mcp.callTool({
      name: 'earshot_alert_create',
      arguments: { title: 't', entities: [ENTITY], notifications: [] },
    });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error_code: 'insufficient_scope' });
    expect((await mcp.callTool({ name: 'earshot_alert_list', arguments: {} })).isError).toBeFalsy();
    await mcp.close();
  });

  it("keeps callers apart on the one shared MCP server: a read-only grant and another project's key, at once", async () => {
    const { params, verifier } = await authorize('mcp:read');
    const { access_token: token } = await exchange(params, verifier);
    const other = await createTenant(h.db);
    await verifyEmail(h.db, other.organization.id, 'ops@example.com');
    const grant = { authorization: `Bearer ${token}` };
    const call = (headers: Record<string, string>, name: string, args: object) =>
      mcpPost(
        h.mcpUrl,
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
        headers,
      )
        .then((response) => response.json())
        .then((body) => (body as { id: number; result: ToolAnswer }).result);
    type ToolAnswer = { isError?: boolean; structuredContent: Record<string, unknown> };
    const create = {
      title: 'Shared server',
      entities: [ENTITY],
      notifications: [{ type: 'EMAIL', email: 'ops@example.com' }],
    };
    const answers = await Promise.all(
      Array.from({ length: 24 }, async (_, i) => {
        const byGrant = i % 2 === 0;
        const headers = byGrant ? grant : other.headers;
        const name = i % 4 < 2 ? 'earshot_alert_create' : 'earshot_alert_list';
        return {
          byGrant,
          name,
          result: await call(headers, name, name === 'earshot_alert_create' ? create : {}),
        };
      }),
    );
    for (const { byGrant, name, result } of answers) {
      const project = byGrant ? h.tenant.project.id : other.project.id;
      if (name === 'earshot_alert_create' && byGrant) {
        expect(result).toMatchObject({
          isError: true,
          structuredContent: { error_code: 'insufficient_scope' },
        });
      } else if (name === 'earshot_alert_create') {
        expect(result.isError).toBeFalsy();
        expect(result.structuredContent.project_id).toBe(project);
      } else {
        expect(result.isError).toBeFalsy();
        const listed = result.structuredContent.data as { project_id: string }[];
        expect(listed.every((alert) => alert.project_id === project)).toBe(true);
      }
    }
    const created = answers.filter((a) => !a.byGrant && a.name === 'earshot_alert_create');
    expect(new Set(created.map((a) => a.result.structuredContent.id)).size).toBe(6);
  });

  it('revokes a grant through RFC 7009: its refresh token stops working and MCP answers 401', async () => {
    const { params, verifier } = await authorize();
    const tokens = await exchange(params, verifier);
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, oauth.None(), tokens.refresh_token!, insecure),
    );
    expect(await oauthErrorOf(refresh(tokens.refresh_token!))).toBe('invalid_grant');
    h.advance(6_000);
    expect((await rpc(tokens.access_token)).status).toBe(401);
  });

  it('refuses an access token on the REST API', async () => {
    const { params, verifier } = await authorize();
    const tokens = await exchange(params, verifier);
    const rest = await fetch(`${h.url}/v1/projects/${h.tenant.project.id}/alerts`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(rest.status).toBe(401);
    expect(await rest.json()).toMatchObject({ error_code: 'unauthorized' });
  });

  it('refuses an expired access token with the discovery challenge', async () => {
    const { params, verifier } = await authorize();
    const tokens = await exchange(params, verifier);
    expect((await rpc(tokens.access_token)).status).toBe(200);
    h.advance(15 * 60_000 + 1_000);
    const expired = await rpc(tokens.access_token);
    expect(expired.status).toBe(401);
    expect(expired.headers.get('www-authenticate')).toBe(
      `Bearer realm="mcp", error="invalid_token", resource_metadata="${h.url}/.well-known/oauth-protected-resource"`,
    );
  });

  it('revokes the grant when a code is exchanged twice', async () => {
    const { params, verifier } = await authorize();
    const tokens = await exchange(params, verifier);
    expect(await oauthErrorOf(exchange(params, verifier))).toBe('invalid_grant');
    expect(await oauthErrorOf(refresh(tokens.refresh_token!))).toBe('invalid_grant');
  });

  it('refuses an expired code and a wrong code_verifier', async () => {
    const late = await authorize();
    h.advance(61_000);
    expect(await oauthErrorOf(exchange(late.params, late.verifier))).toBe('invalid_grant');
    const wrong = await authorize();
    expect(await oauthErrorOf(exchange(wrong.params, oauth.generateRandomCodeVerifier()))).toBe(
      'invalid_grant',
    );
  });
});

describe('authorization requests the server refuses', () => {
  const base = async () => ({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    scope: 'mcp:read',
    state: 'st',
    code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
    code_challenge_method: 'S256',
    resource: h.mcpUrl,
  });
  const redirectError = async (overrides: Record<string, string | undefined>) => {
    const response = await fetch(authorizationUrl({ ...(await base()), ...overrides }), {
      redirect: 'manual',
    });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get('state')).toBe('st');
    expect(location.searchParams.get('iss')).toBe(h.url);
    return location.searchParams.get('error');
  };

  it('without PKCE: invalid_request', async () => {
    expect(await redirectError({ code_challenge: undefined, code_challenge_method: undefined })).toBe(
      'invalid_request',
    );
  });

  it('with plain PKCE: invalid_request', async () => {
    expect(await redirectError({ code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' })).toBe(
      'invalid_request',
    );
  });

  it('for another resource or none: invalid_target', async () => {
    expect(await redirectError({ resource: `${h.url}/other` })).toBe('invalid_target');
    expect(await redirectError({ resource: undefined })).toBe('invalid_target');
  });

  it('with an unknown scope: invalid_scope', async () => {
    expect(await redirectError({ scope: 'mcp:read admin' })).toBe('invalid_scope');
  });

  it('with a redirect URI the client did not register: an error page, no redirect', async () => {
    const response = await fetch(
      authorizationUrl({ ...(await base()), redirect_uri: 'http://127.0.0.1:9/other' }),
      {
        redirect: 'manual',
      },
    );
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('Wrong redirect URI');
  });

  it('a denial redirects with access_denied', async () => {
    const form = await consentForm(authorizationUrl(await base()));
    const denied = await submitConsent(form, { decision: 'deny' });
    expect(new URL(denied.headers.get('location')!).searchParams.get('error')).toBe('access_denied');
  });

  it('a form post without the CSRF cookie is refused', async () => {
    const form = await consentForm(authorizationUrl(await base()));
    const forged = await submitConsent(
      { ...form, cookie: '' },
      { api_key: h.tenant.key, decision: 'approve' },
    );
    expect(forged.status).toBe(403);
    expect(forged.headers.get('location')).toBeNull();
  });

  it('a wrong API key shows the form again with an error', async () => {
    const form = await consentForm(authorizationUrl(await base()));
    const refused = await submitConsent(form, { api_key: 'ek_nope', decision: 'approve' });
    expect(refused.status).toBe(401);
    expect(await refused.text()).toContain('That is not a valid project API key.');
  });
});

describe('confidential clients', () => {
  it('register with a secret shown once and authenticate with client_secret_basic', async () => {
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        {
          client_name: 'Server agent',
          redirect_uris: [REDIRECT],
          token_endpoint_auth_method: 'client_secret_basic',
        },
        insecure,
      ),
    );
    expect(registered.client_secret).toMatch(/^ocs_/);
    const confidential: oauth.Client = { client_id: registered.client_id };
    const { params, verifier } = await authorize('mcp:read', confidential);
    const wrong = await oauth.authorizationCodeGrantRequest(
      as,
      confidential,
      oauth.ClientSecretBasic('wrong'),
      params,
      REDIRECT,
      verifier,
      insecure,
    );
    expect(wrong.status).toBe(401);
    const { params: params2, verifier: verifier2 } = await authorize('mcp:read', confidential);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      confidential,
      await oauth.authorizationCodeGrantRequest(
        as,
        confidential,
        oauth.ClientSecretBasic(registered.client_secret as string),
        params2,
        REDIRECT,
        verifier2,
        insecure,
      ),
    );
    expect(tokens.token_type).toBe('bearer');
  });

  it('refuses a registration without redirect URIs', async () => {
    const response = await fetch(`${h.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'x', redirect_uris: ['http://evil.example/cb'] }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: 'invalid_redirect_uri',
      error_code: 'invalid_redirect_uri',
    });
  });
});

describe('client authentication failures (RFC 6749 §5.2)', () => {
  const post = (endpoint: string, body: Record<string, string>, authorization?: string) =>
    fetch(`${h.url}/oauth/${endpoint}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(authorization ? { authorization } : {}),
      },
      body: new URLSearchParams(body),
    });

  it('a malformed Basic credential is invalid_client with WWW-Authenticate: Basic, on token and revoke', async () => {
    const malformed = [
      `Basic ${Buffer.from('%E0%A4%A:x').toString('base64')}`,
      `Basic ${Buffer.from('oc_x:%').toString('base64')}`,
      `Basic ${Buffer.from('oc\u0000x:y').toString('base64')}`,
      `Basic ${Buffer.from('oc%00x:y').toString('base64')}`,
      'Basic',
      'Basic a b',
    ];
    for (const authorization of malformed)
      for (const [endpoint, body] of [
        ['token', { grant_type: 'refresh_token', refresh_token: 'x' }],
        ['revoke', { token: 'x' }],
      ] as const) {
        const response = await post(endpoint, body, authorization);
        expect(response.status, `${endpoint} ${authorization}`).toBe(401);
        expect(response.headers.get('www-authenticate')).toBe('Basic realm="oauth"');
        expect(await response.json()).toMatchObject({
          error: 'invalid_client',
          error_code: 'invalid_client',
        });
      }
  });

  it('a wrong Basic secret names Basic on revoke too; a failed form authentication names none', async () => {
    const wrongSecret = `Basic ${Buffer.from(`${client.client_id}:nope`).toString('base64')}`;
    const revoke = await post('revoke', { token: 'x' }, wrongSecret);
    expect(revoke.status).toBe(401);
    expect(revoke.headers.get('www-authenticate')).toBe('Basic realm="oauth"');
    for (const endpoint of ['token', 'revoke']) {
      const form = await post(endpoint, { client_id: 'oc_unknown', token: 'x', grant_type: 'refresh_token' });
      expect(form.status).toBe(401);
      expect(form.headers.get('www-authenticate')).toBeNull();
      expect(await form.json()).toMatchObject({ error: 'invalid_client' });
    }
  });
});

describe('client names shown on the consent page', () => {
  const register = (client_name: string) =>
    fetch(`${h.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
    });

  it('refuses a name with a bidirectional override, an isolate, an invisible mark, a control or a line separator', async () => {
    for (const name of [
      'Trusted\u202Egnp.exe',
      'a\u2066b\u2069',
      'Zero\u200Bwidth',
      'Bell\u0007',
      'Two\nlines',
      'x\u2028y',
    ]) {
      const response = await register(name);
      expect(response.status, JSON.stringify(name)).toBe(400);
      expect(await response.json()).toMatchObject({ error: 'invalid_client_metadata' });
    }
  });

  it('keeps names in any script, emoji sequences with joiners included', async () => {
    for (const name of ['Café 日本 Агент', 'مساعد\u200Cذكي', 'Dev 👩\u200D💻']) {
      const response = await register(name);
      expect(response.status, name).toBe(201);
      expect(((await response.json()) as { client_name: string }).client_name).toBe(name);
    }
  });
});

describe('clients identified by a client metadata document URL', () => {
  const DOC_REDIRECT = 'http://127.0.0.1:9/cimd-callback';
  let hm: AgentsHarness;
  let docs: DocumentServer;
  let asm: oauth.AuthorizationServer;

  beforeAll(async () => {
    docs = await startDocumentServer();
    // Loopback is opened by the explicit setting only; the test CA is trusted by this harness only.
    hm = await agentsHarness({ EARSHOT_OAUTH_CLIENT_METADATA_ALLOW_CIDRS: '127.0.0.1/32' }, undefined, {
      clientMetadata: { ca: docs.tls.ca, timeoutMs: 1_000 },
    });
    const issuer = new URL(hm.url);
    asm = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
  });
  afterAll(async () => {
    await hm?.close();
    await docs?.close();
  });

  const documentOf = (name: string, extra: Record<string, unknown> = {}) => ({
    client_name: name,
    client_uri: 'https://agent.example',
    redirect_uris: [DOC_REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...extra,
  });

  async function authorizationRequest(clientId: string, redirectUri = DOC_REDIRECT, harness = hm) {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(`${harness.url}/oauth/authorize`);
    for (const [name, value] of Object.entries({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: 'mcp:read mcp:write',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      resource: harness.mcpUrl,
    }))
      url.searchParams.set(name, value);
    return { url, verifier, state };
  }

  /** An authorization request that must end on an error page: never a redirect. */
  async function refusedPage(clientId: string, redirectUri?: string, harness = hm) {
    const { url } = await authorizationRequest(clientId, redirectUri, harness);
    const response = await fetch(url, { redirect: 'manual' });
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    return response.text();
  }

  /** Consent approved through the form: the token response, as oauth4webapi processes it. */
  async function tokensFor(documentClient: oauth.Client) {
    const { url, verifier, state } = await authorizationRequest(documentClient.client_id);
    const form = await consentForm(url);
    expect(form.page.status).toBe(200);
    const approved = await fetch(`${hm.url}/oauth/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.cookie },
      body: new URLSearchParams({ ...form.fields, api_key: hm.tenant.key, decision: 'approve' }),
    });
    expect(approved.status).toBe(302);
    const params = oauth.validateAuthResponse(
      asm,
      documentClient,
      new URL(approved.headers.get('location')!),
      state,
    );
    const response = await oauth.authorizationCodeGrantRequest(
      asm,
      documentClient,
      oauth.None(),
      params,
      DOC_REDIRECT,
      verifier,
      { additionalParameters: { resource: hm.mcpUrl }, ...insecure },
    );
    return { tokens: await oauth.processAuthorizationCodeResponse(asm, documentClient, response), form };
  }

  const refreshWith = async (documentClient: oauth.Client, refreshToken: string) =>
    oauth.processRefreshTokenResponse(
      asm,
      documentClient,
      await oauth.refreshTokenGrantRequest(asm, documentClient, oauth.None(), refreshToken, insecure),
    );

  it('advertises client_id_metadata_document_supported', () => {
    expect(asm.client_id_metadata_document_supported).toBe(true);
    expect(asm.token_endpoint_auth_methods_supported).toContain('none');
  });

  it('authorizes through the consent form, serves MCP, refreshes from the cache, and revokes', async () => {
    const clientId = docs.serve('/agent/client.json', documentOf('Document agent'), {
      'cache-control': 'max-age=300',
    });
    const documentClient: oauth.Client = { client_id: clientId, token_endpoint_auth_method: 'none' };
    const { tokens, form } = await tokensFor(documentClient);
    // The page is headed by the host that serves the document; the name is only a claim.
    expect(form.html).toContain(
      `<span class="host" id="client-host">127.0.0.1:${new URL(clientId).port}</span>`,
    );
    expect(form.html).toContain('It calls itself <strong>Document agent</strong>');
    expect(form.html).not.toContain('<h1>Document agent');
    // A loopback redirect: any local program could present this client_id with one.
    expect(form.html).toContain('id="device-warning"');
    expect(docs.hits('/agent/client.json')).toBe(1);

    const claims = await oauth.validateJwtAccessToken(
      asm,
      new Request(hm.mcpUrl, { headers: { authorization: `Bearer ${tokens.access_token}` } }),
      hm.mcpUrl,
      insecure,
    );
    expect(claims).toMatchObject({ client_id: clientId, project_id: hm.tenant.project.id });

    const mcp = new Client({ name: 'cimd-agent', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(hm.mcpUrl), {
        requestInit: { headers: { authorization: `Bearer ${tokens.access_token}` } },
      }),
    );
    const listed = await mcp.callTool({ name: 'earshot_alert_list', arguments: {} });
    expect(listed.isError).toBeFalsy();
    await mcp.close();

    // The refresh finds the document in the process cache: no second fetch.
    const rotated = await refreshWith(documentClient, tokens.refresh_token!);
    expect(rotated.refresh_token).not.toBe(tokens.refresh_token);
    expect(docs.hits('/agent/client.json')).toBe(1);

    // The operator sees it as a metadata-document client, with its grant.
    const { clients } = await oauthClients(hm.db);
    expect(clients.find((c) => c.id === clientId)).toMatchObject({
      kind: 'metadata_document',
      name: 'Document agent',
      redirect_uris: [DOC_REDIRECT],
      token_endpoint_auth_method: 'none',
      client_uri: 'https://agent.example',
    });
    const { grants } = await oauthGrants(hm.db, hm.tenant.project.id);
    expect(grants.find((g) => g.id === claims.grant_id)).toMatchObject({
      client_id: clientId,
      client_name: 'Document agent',
    });

    // Past max-age (300 s) the document is fetched again.
    hm.advance(301_000);
    const again = await refreshWith(documentClient, rotated.refresh_token!);
    expect(docs.hits('/agent/client.json')).toBe(2);

    // Replaying a spent refresh token revokes the grant, as for any client.
    expect(await oauthErrorOf(refreshWith(documentClient, rotated.refresh_token!))).toBe('invalid_grant');
    expect(await oauthErrorOf(refreshWith(documentClient, again.refresh_token!))).toBe('invalid_grant');
    expect((await findGrant(hm.db, claims.grant_id as string))?.revokedReason).toBe('refresh_token_replay');
  });

  it('RFC 7009 revocation and the operator revoke work, the latter even while the document is gone', async () => {
    const path = '/revoke/client.json';
    const clientId = docs.serve(path, documentOf('Revoking agent'), { 'cache-control': 'max-age=60' });
    const documentClient: oauth.Client = { client_id: clientId, token_endpoint_auth_method: 'none' };
    const first = await tokensFor(documentClient);
    const revoked = await oauth.revocationRequest(
      asm,
      documentClient,
      oauth.None(),
      first.tokens.refresh_token!,
      insecure,
    );
    await oauth.processRevocationResponse(revoked);
    expect((await findGrant(hm.db, grantOf(first.tokens.access_token)))?.revokedReason).toBe(
      'revoked_by_client',
    );

    const second = await tokensFor(documentClient);
    // The document disappears; once the cache runs out, a refresh is refused with the reason.
    docs.handle(path, (res) => res.writeHead(404).end());
    hm.advance(61_000);
    const refused = await oauth.refreshTokenGrantRequest(
      asm,
      documentClient,
      oauth.None(),
      second.tokens.refresh_token!,
      insecure,
    );
    expect(refused.status).toBe(401);
    const body = (await refused.json()) as { error: string; error_description: string };
    expect(body.error).toBe('invalid_client');
    expect(body.error_description).toContain('answered HTTP 404');
    // Revoking does not depend on the client's web server.
    const stillRevocable = await oauth.revocationRequest(
      asm,
      documentClient,
      oauth.None(),
      second.tokens.refresh_token!,
      insecure,
    );
    expect(stillRevocable.status).toBe(200);
    const grantId = grantOf(second.tokens.access_token);
    expect((await findGrant(hm.db, grantId))?.revokedReason).toBe('revoked_by_client');
    await expect(oauthRevoke(hm.db, grantId, new Date())).resolves.toMatchObject({ id: grantId });
  });

  it('answers a refresh 503 temporarily_unavailable, not invalid_client, while strangers fill the fetch bound', async () => {
    const path = '/busy/client.json';
    const clientId = docs.serve(path, documentOf('Busy agent'), { 'cache-control': 'max-age=60' });
    const documentClient: oauth.Client = { client_id: clientId, token_endpoint_auth_method: 'none' };
    const { tokens } = await tokensFor(documentClient);
    hm.advance(61_000);
    // Anyone can start 16 fetches of documents that never answer (1 s timeout in this harness).
    const stalls = Array.from({ length: 16 }, (_, i) =>
      docs.handle(`/busy/stall-${i}.json`, () => undefined),
    );
    const pages = stalls.map(async (stall) =>
      fetch((await authorizationRequest(stall)).url, { redirect: 'manual' }),
    );
    while (stalls.some((_, i) => docs.hits(`/busy/stall-${i}.json`) === 0))
      await new Promise((resolve) => setTimeout(resolve, 10));
    const refused = await oauth.refreshTokenGrantRequest(
      asm,
      documentClient,
      oauth.None(),
      tokens.refresh_token!,
      insecure,
    );
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(((await refused.json()) as { error: string }).error).toBe('temporarily_unavailable');
    await Promise.all(pages);
    // Once the stalls are over, the same refresh token works: it was not spent.
    const rotated = await refreshWith(documentClient, tokens.refresh_token!);
    expect(rotated.access_token).toBeTruthy();
  });

  it('refuses a document whose client_id is not exactly its URL', async () => {
    const clientId = docs.handle('/mismatch.json', (res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ...documentOf('Impostor'), client_id: 'https://famous.example/client.json' })),
    );
    const html = await refusedPage(clientId);
    expect(html).toContain('Application could not be verified');
    expect(html).toContain('invalid_client');
    expect(html).toContain('is not exactly the URL it was fetched from');
  });

  it('warns of a device return address only: not for an https one, nor for a registered client', async () => {
    const web = 'https://agent.example/oauth/callback';
    const clientId = docs.serve('/web.json', documentOf('Web agent', { redirect_uris: [web, DOC_REDIRECT] }));
    const { url } = await authorizationRequest(clientId, web);
    const page = await fetch(url, { redirect: 'manual' });
    expect(page.status).toBe(200);
    expect(await page.text()).not.toContain('device-warning');
    const local = await fetch((await authorizationRequest(clientId)).url, { redirect: 'manual' });
    expect(await local.text()).toContain('id="device-warning"');
    // A registered client's loopback redirect was registered with earshot: no warning.
    const registered = await registerPublicClient('Registered agent');
    const form = await consentForm(
      authorizationUrl({
        response_type: 'code',
        client_id: registered.client_id,
        redirect_uri: REDIRECT,
        code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
        code_challenge_method: 'S256',
        resource: h.mcpUrl,
      }),
    );
    expect(form.page.status).toBe(200);
    expect(form.html).not.toContain('device-warning');
  });

  it('refuses a redirect_uri the document does not list, and never redirects to it', async () => {
    const clientId = docs.serve('/redirects.json', documentOf('Listed agent'));
    const html = await refusedPage(clientId, 'http://127.0.0.1:9/elsewhere');
    expect(html).toContain('Wrong redirect URI');
    expect(html).toContain('invalid_request');
  });

  it('refuses an http client_id, one without a path, and one with dot segments', async () => {
    const insecureId = docs.url('/plain.json').replace('https:', 'http:');
    expect(await refusedPage(insecureId)).toContain('client_id must be an https URL');
    expect(await refusedPage(docs.url('/'))).toContain('client_id must contain a path');
    expect(await refusedPage(`${docs.url('/a')}/../b.json`)).toContain('path segments');
    const documentClient: oauth.Client = { client_id: insecureId, token_endpoint_auth_method: 'none' };
    const token = await oauth.refreshTokenGrantRequest(asm, documentClient, oauth.None(), 'x', insecure);
    expect(token.status).toBe(401);
    expect(((await token.json()) as { error: string }).error).toBe('invalid_client');
  });

  it('refuses a private address unless the allow setting opens it', async () => {
    const clientId = docs.serve('/private.json', documentOf('Private agent'));
    // The file's main server has no EARSHOT_OAUTH_CLIENT_METADATA_ALLOW_CIDRS.
    const html = await refusedPage(clientId, DOC_REDIRECT, h);
    expect(html).toContain('is not a public address (loopback address, 127.0.0.0/8)');
    expect(docs.hits('/private.json')).toBe(0);
  });

  it('refuses an oversized document, with or without a content-length', async () => {
    const big = documentOf('Big agent', { padding: 'x'.repeat(6_000) });
    const declared = docs.serve('/big.json', big);
    expect(await refusedPage(declared)).toContain('larger than 5120 bytes');
    const chunked = docs.handle('/big-chunked.json', (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const text = JSON.stringify({ client_id: docs.url('/big-chunked.json'), ...big });
      for (let i = 0; i < text.length; i += 1000) res.write(text.slice(i, i + 1000));
      res.end();
    });
    expect(await refusedPage(chunked)).toContain('larger than 5120 bytes');
  });

  it('refuses a document that is not JSON, by content type or by content', async () => {
    const html = docs.handle('/page.json', (res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello</html>'),
    );
    expect(await refusedPage(html)).toContain('it must be application/json');
    const broken = docs.handle('/broken.json', (res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"client_id": '),
    );
    expect(await refusedPage(broken)).toContain('is not valid JSON');
  });

  it('refuses a redirect, a timeout and an unreachable server, and caches none of the failures', async () => {
    const moved = docs.handle('/moved.json', (res) =>
      res.writeHead(302, { location: docs.url('/elsewhere.json') }).end(),
    );
    expect(await refusedPage(moved)).toContain('a redirect, which earshot does not follow');
    expect(docs.hits('/elsewhere.json')).toBe(0);

    const slow = docs.handle('/slow.json', () => undefined); // never answers
    expect(await refusedPage(slow)).toContain('could not be fetched within 1000 ms');

    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await refusedPage(`https://127.0.0.1:${port}/client.json`)).toContain('ECONNREFUSED');

    // Once the document is served properly, the next request fetches it again and succeeds.
    docs.serve('/moved.json', documentOf('Fixed agent'));
    const { url } = await authorizationRequest(moved);
    expect((await fetch(url, { redirect: 'manual' })).status).toBe(200);
  });

  it('refuses, never a 500, a document with a NUL in a URI, or a client_id with an upper-case scheme', async () => {
    // A document whose redirect URI or client_uri holds a NUL is refused, not stored.
    const badRedirect = docs.serve(
      '/nul-redirect.json',
      documentOf('Agent', { redirect_uris: [`${DOC_REDIRECT}\u0000`] }),
    );
    expect(await refusedPage(badRedirect)).toContain('redirect_uris must list');
    const badUri = docs.serve(
      '/nul-uri.json',
      documentOf('Agent', { client_uri: 'https://agent.example/\u0000' }),
    );
    const { url } = await authorizationRequest(badUri);
    expect((await fetch(url, { redirect: 'manual' })).status).toBe(200);

    // An upper-case scheme is refused before anything is fetched or stored.
    const upper = docs.url('/upper.json').replace('https:', 'HTTPS:');
    docs.handle('/upper.json', (res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ...documentOf('Upper agent'), client_id: upper })),
    );
    // Before the fix the consent page was shown and approving it answered 500 (the row's check).
    expect(await refusedPage(upper)).toContain('must begin with https://');
    expect(docs.hits('/upper.json')).toBe(0);
  });

  it('refuses a client_id whose dot segments hide behind a backslash or a tab', async () => {
    // Served at /~bob/c.json, claiming an id that names /~alice/: the URL parser reads "\\" as "/"
    // and drops a tab, so without the character rule the id resolved to /~bob/c.json and passed.
    for (const hidden of ['/~alice\\..\\~bob/c.json', '/~alice/.\t./~bob/c.json']) {
      const clientId = docs.url(hidden);
      docs.handle('/~bob/c.json', (res) =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ ...documentOf('Alice agent'), client_id: clientId })),
      );
      expect(await refusedPage(clientId)).toContain('characters a URL may not hold');
    }
    expect(docs.hits('/~bob/c.json')).toBe(0);
  });

  it('refuses shared-secret authentication methods and secrets in the document', async () => {
    const basic = docs.serve(
      '/secret-basic.json',
      documentOf('Secret agent', { token_endpoint_auth_method: 'client_secret_basic' }),
    );
    expect(await refusedPage(basic)).toContain(
      'token_endpoint_auth_method client_secret_basic needs a shared secret',
    );
    const withSecret = docs.serve('/secret.json', documentOf('Secret agent', { client_secret: 'hunter2' }));
    expect(await refusedPage(withSecret)).toContain('must not contain client_secret');
    const jwt = docs.serve(
      '/jwt.json',
      documentOf('Key agent', { token_endpoint_auth_method: 'private_key_jwt' }),
    );
    expect(await refusedPage(jwt)).toContain('private_key_jwt is not supported');
  });
});
