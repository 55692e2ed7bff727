import type { FastifyInstance } from 'fastify';
import { KeyVerifier } from '../platform/keys.ts';
import type { Capability, Runtime } from '../runtime.ts';
import { deriveKey } from '../secret-key.ts';
import { parseAllowCidrs } from '../webhooks/address-rule.ts';
import { createAgentCredentials } from './credentials.ts';
import { llmsRoutes } from './llms.ts';
import { mcpRoutes } from './mcp.ts';
import { type ClientMetadataOptions, createClientMetadataResolver } from './oauth/client-metadata.ts';
import { oauthRoutes } from './oauth/routes.ts';
import { createTokenIssuer } from './oauth/tokens.ts';

export interface AgentsOptions {
  /** Client metadata document fetching: trust roots, timeout, size cap (tests). */
  clientMetadata?: Partial<Omit<ClientMetadataOptions, 'now'>>;
}

/** Agent access (docs/agents.md): the MCP server, its OAuth 2.1 authorization server, /llms.txt. */
export function agentsCapability(runtime: Runtime, options: AgentsOptions = {}): Capability {
  const base = runtime.config.publicBaseUrl;
  // One per process: a token refresh finds the document fetched at authorization in its cache.
  const clientMetadata = createClientMetadataResolver({
    allow: parseAllowCidrs(
      runtime.config.oauthClientMetadataAllowCidrs,
      'EARSHOT_OAUTH_CLIENT_METADATA_ALLOW_CIDRS',
    ),
    ...options.clientMetadata,
    now: () => runtime.now(),
  });
  async function routes(app: FastifyInstance) {
    const tokens = await createTokenIssuer({
      issuer: base,
      audience: `${base}/mcp`,
      rootKey: runtime.secretKey,
      previousRootKeys: runtime.previousSecretKeys ?? [],
      signingKeyPem: runtime.config.oauthSigningKey,
    });
    const keys = new KeyVerifier(runtime.db);
    const now = () => runtime.now();
    await app.register(
      oauthRoutes({
        db: runtime.db,
        keys,
        tokens,
        publicBaseUrl: base,
        csrfKey: deriveKey(runtime.secretKey, 'oauth-csrf'),
        clientMetadata,
        now,
      }),
    );
    await app.register(
      mcpRoutes({
        publicBaseUrl: base,
        callerOf: createAgentCredentials({ db: runtime.db, keys, tokens, now }),
      }),
    );
    await app.register(llmsRoutes({ publicBaseUrl: base }));
  }
  return { name: 'agents', routes: [routes] };
}
