import type { FastifyInstance } from 'fastify';
import { KeyVerifier } from '../platform/keys.ts';
import type { Capability, Runtime } from '../runtime.ts';
import { deriveKey } from '../secret-key.ts';
import { createAgentCredentials } from './credentials.ts';
import { llmsRoutes } from './llms.ts';
import { mcpRoutes } from './mcp.ts';
import { oauthRoutes } from './oauth/routes.ts';
import { createTokenIssuer } from './oauth/tokens.ts';

/** Agent access (docs/agents.md): the MCP server, its OAuth 2.1 authorization server, /llms.txt. */
export function agentsCapability(runtime: Runtime): Capability {
  const base = runtime.config.publicBaseUrl;
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
