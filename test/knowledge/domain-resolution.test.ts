import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { episodesProjection } from '../../projections/episodes/projection.ts';
import { knowledgeRoutes } from '../../src/knowledge/routes.ts';
import type { PreviewService } from '../../src/matching/previews/preview.ts';
import { entityEvent, episodeEvent } from '../fixtures/events.ts';
import { type PipelineFixture, pipelineFixture, previewApp, project } from '../matching/support.ts';
import { companyReferences } from '../support/company-refs.ts';

const NVIDIA = { id: 'ent-nvidia', slug: 'nvidia', companyId: 'c-nvidia', domain: 'nvidia.com' };

describe('every company reference (id, slug, company.id, domain in any form) addresses the company, in alerts and previews too', () => {
  let f: PipelineFixture;
  let app: FastifyInstance;
  let previews: PreviewService;

  beforeAll(async () => {
    f = await pipelineFixture();
    await f.ingest([
      entityEvent({
        id: 'ent-nvidia',
        slug: 'nvidia',
        name: 'NVIDIA',
        entity_type: 'COMPANY',
        company: { id: 'c-nvidia', domain: 'nvidia.com', ticker: 'NVDA' },
      }),
      entityEvent({
        id: 'ent-jensen',
        slug: 'jensen-huang',
        name: 'Jensen Huang',
        entity_type: 'PERSON',
        person: { title: 'CEO', company: 'NVIDIA' },
      }),
      episodeEvent({ lines: ['NVIDIA today.'], publishedAt: '2026-11-20T06:00:00Z' }),
      episodeEvent({ lines: ['Nothing here.'], publishedAt: '2026-11-19T06:00:00Z' }),
    ]);
    await project(f.db, f.store, entitiesProjection);
    await project(f.db, f.store, episodesProjection);
    ({ previews, app } = await previewApp(f, [knowledgeRoutes()]));
  });
  afterAll(async () => {
    await app.close();
    await f.close();
  });

  it('creates an alert on a company given by any reference, stored under the entity id', async () => {
    for (const given of companyReferences(NVIDIA)) {
      const alert = await f.createAlert(given);
      expect(alert.entities, given).toEqual([{ entity_type: 'COMPANY', entity_id: 'ent-nvidia' }]);
    }
  });

  it('refuses a domain no company holds, and a person, as an unresolved reference', async () => {
    for (const given of ['nobody.example', 'jensen-huang'])
      await expect(f.createAlert(given)).rejects.toMatchObject({
        status: 422,
        errorCode: 'unresolved_reference',
      });
  });

  it('serves the company and its people by any reference', async () => {
    for (const given of companyReferences(NVIDIA)) {
      const company = await app.inject({
        url: `/v1/companies/${encodeURIComponent(given)}`,
        headers: f.tenant.headers,
      });
      expect(company.statusCode, given).toBe(200);
      expect(company.json()).toMatchObject({ id: 'c-nvidia', entity_id: 'ent-nvidia' });
      const people = await app.inject({
        url: '/v1/people',
        query: { company_id: given },
        headers: f.tenant.headers,
      });
      expect(people.statusCode, given).toBe(200);
      expect(people.json().data.map((p: { id: string }) => p.id)).toEqual(['ent-jensen']);
    }
  });

  it('previews a company given by any reference as the same preview', async () => {
    const start = (entityId: string) =>
      app.inject({
        method: 'POST',
        url: `/v1/projects/${f.tenant.project.id}/alerts/preview`,
        headers: f.tenant.headers,
        payload: { entities: [{ entity_type: 'COMPANY', entity_id: entityId }] },
      });
    const byDomain = await start('nvidia.com');
    expect(byDomain.statusCode).toBe(202);
    await previews.idle();
    const result = (
      await app.inject({
        url: `/v1/alerts/preview/${byDomain.json().preview_id}`,
        headers: f.tenant.headers,
      })
    ).json();
    expect(result).toMatchObject({ status: 'completed', total_matches: 1 });
    expect(result.sample[0]).toMatchObject({ entity_id: 'ent-nvidia' });
    for (const given of companyReferences(NVIDIA))
      expect((await start(given)).json().preview_id, given).toBe(byDomain.json().preview_id);
  });
});
