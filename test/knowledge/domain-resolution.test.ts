import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { episodesProjection } from '../../projections/episodes/projection.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { matchingRoutes } from '../../src/matching/http/routes.ts';
import { PreviewService } from '../../src/matching/previews/preview.ts';
import { entityEvent, episodeEvent } from '../fixtures/events.ts';
import { type PipelineFixture, pipelineFixture, project, silentLog } from '../matching/support.ts';

describe('a company domain addresses the company in alerts and previews', () => {
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
        company: { domain: 'nvidia.com', ticker: 'NVDA' },
      }),
      episodeEvent({ lines: ['NVIDIA today.'], publishedAt: '2026-11-20T06:00:00Z' }),
      episodeEvent({ lines: ['Nothing here.'], publishedAt: '2026-11-19T06:00:00Z' }),
    ]);
    await project(f.db, f.store, entitiesProjection);
    await project(f.db, f.store, episodesProjection);
    previews = new PreviewService({ db: f.db, log: silentLog, now: f.now });
    app = await buildHttpApp({
      db: f.db,
      cursorKey: Buffer.alloc(32, 5),
      routes: [matchingRoutes({ store: f.store, previews })],
    });
  });
  afterAll(async () => {
    await app.close();
    await f.close();
  });

  it('creates an alert on a company given by its domain, stored under the entity id', async () => {
    for (const given of ['nvidia.com', 'NVIDIA.COM', 'https://www.nvidia.com/']) {
      const alert = await f.createAlert(given);
      expect(alert.entities).toEqual([{ entity_type: 'COMPANY', entity_id: 'ent-nvidia' }]);
    }
  });

  it('refuses a domain no company holds as an unresolved reference', async () => {
    await expect(f.createAlert('nobody.example')).rejects.toMatchObject({
      status: 422,
      errorCode: 'unresolved_reference',
    });
  });

  it('previews a company given by its domain as the same preview as by id', async () => {
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
    expect((await start('ent-nvidia')).json().preview_id).toBe(byDomain.json().preview_id);
  });
});
