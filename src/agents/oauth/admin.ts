import type { Queryable } from '../../db/db.ts';
import { listClients, listGrants, revokeGrant } from './store.ts';

/** `earshot oauth …` (docs/cli.md): the connected applications an operator can see and revoke. */
export async function oauthClients(db: Queryable) {
  return {
    // A metadata-document client is listed once a human approved it: its id is the document URL,
    // its name, redirect URIs and client_uri are the document's as last fetched.
    clients: (await listClients(db)).map((client) => ({
      id: client.id,
      kind: client.kind,
      name: client.name,
      redirect_uris: client.redirectUris,
      token_endpoint_auth_method: client.authMethod,
      client_uri: client.clientUri,
      metadata_fetched_at: client.metadataFetchedAt?.toISOString() ?? null,
      created_at: client.createdAt.toISOString(),
    })),
  };
}

export async function oauthGrants(db: Queryable, projectId: string | undefined) {
  return {
    grants: (await listGrants(db, projectId ? { projectId } : {})).map((grant) => ({
      id: grant.id,
      client_id: grant.clientId,
      client_name: grant.clientName,
      project_id: grant.projectId,
      scope: grant.scope,
      approved_by_key_id: grant.approvedByKeyId,
      created_at: grant.createdAt.toISOString(),
      revoked_at: grant.revokedAt?.toISOString() ?? null,
      revoked_reason: grant.revokedReason,
    })),
  };
}

export const oauthRevoke = (db: Queryable, grantId: string, now: Date) =>
  revokeGrant(db, grantId, 'revoked_by_operator', now);
