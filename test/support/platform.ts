import type { Db } from '../../src/db/db.ts';
import { createKey } from '../../src/platform/keys.ts';
import { createOrganization, createProject, type Plan } from '../../src/platform/organizations.ts';

/** An organization with one project and a project key: the usual caller of the API. */
export async function createTenant(db: Db, plan: Plan = 'TEAM') {
  const organization = await createOrganization(db, { name: 'Acme', plan });
  const project = await createProject(db, { organizationId: organization.id, name: 'Main' });
  const key = await createKey(db, { kind: 'project', projectId: project.id });
  return { organization, project, key: key.key, keyId: key.id, headers: { 'x-api-key': key.key } };
}
