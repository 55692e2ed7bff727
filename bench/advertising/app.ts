import { randomBytes } from 'node:crypto';
import { advertisingCapability } from '../../src/advertising/capability.ts';
import { advertisingPodcastExtras } from '../../src/advertising/podcast-extras.ts';
import { catalogCapability } from '../../src/catalog/capability.ts';
import type { Db } from '../../src/db/db.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { createKey } from '../../src/platform/keys.ts';
import { createOrganization, createProject } from '../../src/platform/organizations.ts';

/**
 * The catalog and advertising routes in process, without the response cache (every figure is
 * computed from the read models), and the headers of a project key that runs at full speed (the
 * benchmarks measure the routes, not the rate limit).
 */
export async function advertisingApp(db: Db, now: Date) {
  const catalog = catalogCapability({
    now: () => now,
    podcastExtras: advertisingPodcastExtras,
    cacheBytes: 0,
  });
  const app = await buildHttpApp({
    db,
    cursorKey: randomBytes(32),
    rateLimit: { perKey: 0, perAddress: 0, windowMs: 60_000 },
    routes: [...(catalog.routes ?? []), ...(advertisingCapability({ now: () => now }).routes ?? [])],
  });
  const organization = await createOrganization(db, { name: 'Bench', plan: 'BUSINESS' });
  const project = await createProject(db, { organizationId: organization.id, name: 'Bench' });
  const headers = { 'x-api-key': (await createKey(db, { kind: 'project', projectId: project.id })).key };
  return { app, headers };
}
