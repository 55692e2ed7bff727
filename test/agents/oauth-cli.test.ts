import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { findGrant, insertClient, insertGrant, upsertMetadataClient } from '../../src/agents/oauth/store.ts';
import { runCli, schemaUrl } from '../support/cli.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';

let testDb: TestDb;
let env: Record<string, string>;
const cli = async (...args: string[]) => {
  const result = await runCli([...args, '--json'], env);
  return { ...result, json: JSON.parse(result.stdout) };
};

beforeAll(async () => {
  testDb = await createTestDb();
  env = {
    DATABASE_URL: schemaUrl(testDb.schema),
    DATA_DIR: mkdtempSync(join(tmpdir(), 'earshot-oauth-cli-')),
  };
});
afterAll(() => testDb.drop());

it("lists clients and a project's grants, and revokes a grant (earshot oauth)", async () => {
  const a = await createTenant(testDb.db);
  const b = await createTenant(testDb.db);
  const { client } = await insertClient(testDb.db, {
    name: 'Desk agent',
    redirectUris: ['http://127.0.0.1:5000/cb'],
    authMethod: 'none',
  });
  const grant = (tenant: typeof a) =>
    insertGrant(testDb.db, {
      clientId: client.id,
      projectId: tenant.project.id,
      approvedByKeyId: tenant.keyId,
      scope: 'mcp:read',
      now: new Date('2026-11-20T10:00:00Z'),
    });
  const grantA = await grant(a);
  await grant(b);
  const documentUrl = 'https://agent.example/oauth/client.json';
  await upsertMetadataClient(testDb.db, {
    id: documentUrl,
    name: 'Document agent',
    redirectUris: ['http://127.0.0.1:5001/cb'],
    clientUri: 'https://agent.example',
    logoUri: null,
    fetchedAt: new Date('2026-11-21T10:00:00Z'),
  });
  const documentGrant = await insertGrant(testDb.db, {
    clientId: documentUrl,
    projectId: b.project.id,
    approvedByKeyId: b.keyId,
    scope: 'mcp:read mcp:write',
    now: new Date('2026-11-21T10:00:00Z'),
  });

  const clients = await cli('oauth', 'clients');
  expect(clients.code).toBe(0);
  expect(clients.json.clients).toEqual([
    expect.objectContaining({
      id: client.id,
      kind: 'registered',
      name: 'Desk agent',
      token_endpoint_auth_method: 'none',
      client_uri: null,
      metadata_fetched_at: null,
    }),
    expect.objectContaining({
      id: documentUrl,
      kind: 'metadata_document',
      name: 'Document agent',
      redirect_uris: ['http://127.0.0.1:5001/cb'],
      token_endpoint_auth_method: 'none',
      client_uri: 'https://agent.example',
      metadata_fetched_at: '2026-11-21T10:00:00.000Z',
    }),
  ]);

  const grants = await cli('oauth', 'grants', '--project', a.project.id);
  expect(grants.json.grants).toEqual([
    expect.objectContaining({
      id: grantA,
      client_name: 'Desk agent',
      project_id: a.project.id,
      scope: 'mcp:read',
      revoked_at: null,
    }),
  ]);
  const all = (await cli('oauth', 'grants')).json.grants;
  expect(all).toHaveLength(3);
  expect(all[0]).toMatchObject({ id: documentGrant, client_id: documentUrl, client_name: 'Document agent' });
  expect((await cli('oauth', 'revoke', documentGrant)).json).toMatchObject({ id: documentGrant });

  const revoked = await cli('oauth', 'revoke', grantA);
  expect(revoked.json).toMatchObject({ id: grantA, revoked_reason: 'revoked_by_operator' });
  expect((await findGrant(testDb.db, grantA))?.revokedAt).not.toBeNull();

  const unknown = await cli('oauth', 'revoke', 'og_nope');
  expect(unknown.code).toBe(1);
  expect(unknown.json).toEqual({ error: { message: 'No OAuth grant og_nope.', code: 'grant_not_found' } });
}, 60_000);
