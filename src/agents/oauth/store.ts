import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Queryable } from '../../db/db.ts';
import { NotFoundError } from '../../errors.ts';
import { base62 } from '../../ids.ts';

/** The tables of schemas/migrations/0090_oauth.sql: one exported function per statement. */

export const sha256 = (text: string) => createHash('sha256').update(text).digest();
export const opaqueToken = () => randomBytes(32).toString('base64url');

export type ClientAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post';

/** Registered through POST /oauth/register, or identified by the URL of its metadata document. */
export type ClientKind = 'registered' | 'metadata_document';

export interface OAuthClient {
  id: string;
  kind: ClientKind;
  name: string;
  redirectUris: string[];
  authMethod: ClientAuthMethod;
  secretSha256: Buffer | null;
  clientUri: string | null;
  logoUri: string | null;
  /** When the metadata document was last fetched (metadata_document clients only). */
  metadataFetchedAt: Date | null;
  createdAt: Date;
}

interface ClientRow {
  id: string;
  kind: ClientKind;
  name: string;
  redirect_uris: string[];
  token_endpoint_auth_method: ClientAuthMethod;
  secret_sha256: Buffer | null;
  client_uri: string | null;
  logo_uri: string | null;
  metadata_fetched_at: Date | null;
  created_at: Date;
}

const toClient = (row: ClientRow): OAuthClient => ({
  id: row.id,
  kind: row.kind,
  name: row.name,
  redirectUris: row.redirect_uris,
  authMethod: row.token_endpoint_auth_method,
  secretSha256: row.secret_sha256,
  clientUri: row.client_uri,
  logoUri: row.logo_uri,
  metadataFetchedAt: row.metadata_fetched_at,
  createdAt: row.created_at,
});

export async function insertClient(
  db: Queryable,
  input: { name: string; redirectUris: string[]; authMethod: ClientAuthMethod },
) {
  const id = `oc_${base62(24)}`;
  const secret = input.authMethod === 'none' ? undefined : `ocs_${base62(40)}`;
  const { rows } = await db.query<ClientRow>(
    `insert into oauth_clients (id, name, redirect_uris, token_endpoint_auth_method, secret_sha256)
     values ($1::text, $2::text, $3::text[], $4::text, $5::bytea) returning *`,
    [id, input.name, input.redirectUris, input.authMethod, secret ? sha256(secret) : null],
  );
  return { client: toClient(rows[0]!), secret };
}

export async function findClient(db: Queryable, id: string): Promise<OAuthClient | undefined> {
  const { rows } = await db.query<ClientRow>('select * from oauth_clients where id = $1::text', [id]);
  return rows[0] ? toClient(rows[0]) : undefined;
}

/** What a fetched metadata document says about its client (src/agents/oauth/client-metadata.ts). */
export interface MetadataDocumentClient {
  id: string;
  name: string;
  redirectUris: string[];
  clientUri: string | null;
  logoUri: string | null;
  fetchedAt: Date;
}

/** Records a metadata-document client (before its first code), or refreshes its row from the document. */
export async function upsertMetadataClient(db: Queryable, client: MetadataDocumentClient) {
  await db.query(
    `insert into oauth_clients
       (id, kind, name, redirect_uris, token_endpoint_auth_method, client_uri, logo_uri, metadata_fetched_at)
     values ($1::text, 'metadata_document', $2::text, $3::text[], 'none', $4::text, $5::text, $6::timestamptz)
     on conflict (id) do update set name = excluded.name, redirect_uris = excluded.redirect_uris,
       client_uri = excluded.client_uri, logo_uri = excluded.logo_uri,
       metadata_fetched_at = greatest(oauth_clients.metadata_fetched_at, excluded.metadata_fetched_at)
     where oauth_clients.kind = 'metadata_document'`,
    [client.id, client.name, client.redirectUris, client.clientUri, client.logoUri, client.fetchedAt],
  );
}

/** Refreshes the row of a metadata-document client already recorded; no row is created. */
export async function refreshMetadataClient(db: Queryable, client: MetadataDocumentClient) {
  await db.query(
    `update oauth_clients set name = $2::text, redirect_uris = $3::text[], client_uri = $4::text,
       logo_uri = $5::text, metadata_fetched_at = greatest(metadata_fetched_at, $6::timestamptz)
     where id = $1::text and kind = 'metadata_document'`,
    [client.id, client.name, client.redirectUris, client.clientUri, client.logoUri, client.fetchedAt],
  );
}

export async function listClients(db: Queryable) {
  const { rows } = await db.query<ClientRow>('select * from oauth_clients order by created_at, id');
  return rows.map(toClient);
}

export function secretMatches(client: OAuthClient, presented: string) {
  return client.secretSha256 !== null && timingSafeEqual(client.secretSha256, sha256(presented));
}

export interface CodeRequest {
  clientId: string;
  projectId: string;
  approvedByKeyId: string;
  redirectUri: string;
  scope: string;
  codeChallenge: string;
}

export async function insertCode(db: Queryable, request: CodeRequest, expiresAt: Date) {
  const code = opaqueToken();
  await db.query(
    `insert into oauth_codes (code_sha256, client_id, project_id, approved_by_key_id, redirect_uri, scope, code_challenge, expires_at)
     values ($1::bytea, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::timestamptz)`,
    [
      sha256(code),
      request.clientId,
      request.projectId,
      request.approvedByKeyId,
      request.redirectUri,
      request.scope,
      request.codeChallenge,
      expiresAt,
    ],
  );
  return code;
}

export interface StoredCode extends CodeRequest {
  expiresAt: Date;
  /** Set once the code was exchanged: the grant it started. */
  grantId: string | null;
}

/** Locks the code's row for the exchange (`for update`): two concurrent exchanges cannot both win. */
export async function lockCode(tx: Queryable, code: string): Promise<StoredCode | undefined> {
  const { rows } = await tx.query<{
    client_id: string;
    project_id: string;
    approved_by_key_id: string;
    redirect_uri: string;
    scope: string;
    code_challenge: string;
    expires_at: Date;
    grant_id: string | null;
  }>('select * from oauth_codes where code_sha256 = $1::bytea for update', [sha256(code)]);
  const row = rows[0];
  return row
    ? {
        clientId: row.client_id,
        projectId: row.project_id,
        approvedByKeyId: row.approved_by_key_id,
        redirectUri: row.redirect_uri,
        scope: row.scope,
        codeChallenge: row.code_challenge,
        expiresAt: row.expires_at,
        grantId: row.grant_id,
      }
    : undefined;
}

export async function markCodeUsed(tx: Queryable, code: string, grantId: string) {
  await tx.query('update oauth_codes set grant_id = $2::text where code_sha256 = $1::bytea', [
    sha256(code),
    grantId,
  ]);
}

/** Codes are kept a day past their expiry so that a late replay still revokes its grant. */
export async function deleteExpiredCodes(db: Queryable, now: Date) {
  await db.query(`delete from oauth_codes where expires_at < $1::timestamptz - interval '1 day'`, [now]);
}

export async function insertGrant(
  tx: Queryable,
  grant: { clientId: string; projectId: string; approvedByKeyId: string; scope: string; now: Date },
) {
  const id = `og_${base62(24)}`;
  await tx.query(
    `insert into oauth_grants (id, client_id, project_id, approved_by_key_id, scope, created_at)
     values ($1::text, $2::text, $3::text, $4::text, $5::text, $6::timestamptz)`,
    [id, grant.clientId, grant.projectId, grant.approvedByKeyId, grant.scope, grant.now],
  );
  return id;
}

export interface Grant {
  id: string;
  clientId: string;
  clientName: string;
  projectId: string;
  organizationId: string;
  approvedByKeyId: string;
  scope: string;
  createdAt: Date;
  revokedAt: Date | null;
  revokedReason: string | null;
}

interface GrantRow {
  id: string;
  client_id: string;
  client_name: string;
  project_id: string;
  organization_id: string;
  approved_by_key_id: string;
  scope: string;
  created_at: Date;
  revoked_at: Date | null;
  revoked_reason: string | null;
}

const toGrant = (row: GrantRow): Grant => ({
  id: row.id,
  clientId: row.client_id,
  clientName: row.client_name,
  projectId: row.project_id,
  organizationId: row.organization_id,
  approvedByKeyId: row.approved_by_key_id,
  scope: row.scope,
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
  revokedReason: row.revoked_reason,
});

const GRANT_SELECT = `select g.*, c.name as client_name, p.organization_id
  from oauth_grants g join oauth_clients c on c.id = g.client_id join projects p on p.id = g.project_id`;

export async function findGrant(db: Queryable, id: string): Promise<Grant | undefined> {
  const { rows } = await db.query<GrantRow>(`${GRANT_SELECT} where g.id = $1::text`, [id]);
  return rows[0] ? toGrant(rows[0]) : undefined;
}

export async function listGrants(db: Queryable, filter: { projectId?: string } = {}) {
  const { rows } = await db.query<GrantRow>(
    `${GRANT_SELECT} where $1::text is null or g.project_id = $1::text order by g.created_at desc, g.id`,
    [filter.projectId ?? null],
  );
  return rows.map(toGrant);
}

/** Revokes a grant and every refresh token of it; idempotent (the first reason stays). */
export async function revokeGrant(db: Queryable, id: string, reason: string, now: Date) {
  const { rows } = await db.query<{ id: string; revoked_at: Date; revoked_reason: string }>(
    `update oauth_grants set revoked_at = coalesce(revoked_at, $2::timestamptz),
       revoked_reason = coalesce(revoked_reason, $3::text)
     where id = $1::text returning id, revoked_at, revoked_reason`,
    [id, now, reason],
  );
  const row = rows[0];
  if (!row) throw new NotFoundError('grant_not_found', `No OAuth grant ${id}.`);
  await db.query(
    'update oauth_refresh_tokens set used_at = coalesce(used_at, $2::timestamptz) where grant_id = $1::text',
    [id, now],
  );
  return { id: row.id, revoked_at: row.revoked_at.toISOString(), revoked_reason: row.revoked_reason };
}

export async function insertRefreshToken(tx: Queryable, grantId: string, expiresAt: Date) {
  const token = opaqueToken();
  await tx.query(
    `insert into oauth_refresh_tokens (token_sha256, grant_id, expires_at)
     values ($1::bytea, $2::text, $3::timestamptz)`,
    [sha256(token), grantId, expiresAt],
  );
  return token;
}

/**
 * Locks a refresh token's row for a refresh (`for update`): a concurrent use of the same token
 * waits, then sees it spent. `usedAt` is set once it was spent; undefined when unknown.
 */
/**
 * Locks a refresh token's grant, then the token (for update): every writer of a grant's tokens
 * takes the grant first (revokeGrant updates it before them), so two replays of one grant's spent
 * tokens, or a replay and a revoke, wait for each other instead of deadlocking.
 */
export async function lockRefreshToken(tx: Queryable, token: string) {
  await tx.query(
    `select 1 from oauth_grants
      where id = (select grant_id from oauth_refresh_tokens where token_sha256 = $1::bytea) for update`,
    [sha256(token)],
  );
  const { rows } = await tx.query<{ grant_id: string; expires_at: Date; used_at: Date | null }>(
    'select grant_id, expires_at, used_at from oauth_refresh_tokens where token_sha256 = $1::bytea for update',
    [sha256(token)],
  );
  const row = rows[0];
  return row ? { grantId: row.grant_id, expiresAt: row.expires_at, usedAt: row.used_at } : undefined;
}

export async function markRefreshTokenUsed(tx: Queryable, token: string, now: Date) {
  await tx.query('update oauth_refresh_tokens set used_at = $2::timestamptz where token_sha256 = $1::bytea', [
    sha256(token),
    now,
  ]);
}

/** A refresh token past its 30 days can no longer be replayed into anything: it goes. */
export async function deleteExpiredRefreshTokens(db: Queryable, now: Date) {
  await db.query('delete from oauth_refresh_tokens where expires_at < $1::timestamptz', [now]);
}

/** The grant of a refresh token, for revocation (RFC 7009); undefined when unknown. */
export async function grantOfRefreshToken(db: Queryable, token: string) {
  const { rows } = await db.query<{ grant_id: string }>(
    'select grant_id from oauth_refresh_tokens where token_sha256 = $1::bytea',
    [sha256(token)],
  );
  return rows[0]?.grant_id;
}
