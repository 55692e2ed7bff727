import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import type { Db } from '../../src/db/db.ts';
import { entityRoutes } from '../../src/entities/routes.ts';
import type { EventStore } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { entityEvent } from '../fixtures/events.ts';
import { createDb, ENGINES } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';
import { catchUp } from '../support/projections.ts';

describe.each(ENGINES)('entities read model and endpoints on %s', (engine) => {
  let db: Db;
  let drop: () => Promise<void>;
  let store: EventStore;
  let app: FastifyInstance;
  let headers: Record<string, string>;

  beforeAll(async () => {
    ({ db, drop } = await createDb(engine));
    store = createPostgresEventStore(db);
    app = await buildHttpApp({ db, cursorKey: Buffer.alloc(32, 2), routes: [entityRoutes()] });
    headers = (await createTenant(db)).headers;
    await ingestEvents(store, [
      entityEvent({
        id: 'ent-jensen',
        slug: 'jensen-huang',
        name: 'Jensen Huang',
        aliases: ['Jensen'],
        person: { title: 'CEO', company: 'NVIDIA' },
        image_url: 'https://img.example/jensen.png',
        external_links: [
          { platform: 'x', identifier: 'jensenhuang', url: 'https://x.example/jensenhuang' },
          { platform: 'linkedin', identifier: 'jensen-huang' },
        ],
      }),
      entityEvent({
        id: 'ent-nvidia',
        slug: 'nvidia',
        name: 'NVIDIA',
        entity_type: 'COMPANY',
        company: { domain: 'nvidia.com', ticker: 'NVDA' },
      }),
      entityEvent({ id: 'ent-jen', slug: 'jen-psaki', name: 'Jen Psaki' }),
      entityEvent({ id: 'ent-zoe', slug: 'zoe-saldana', name: 'Zoë Saldaña' }),
      entityEvent({
        id: 'ent-ai',
        slug: 'artificial-intelligence',
        name: 'Artificial Intelligence',
        entity_type: 'KNOWLEDGE_GRAPH_ENTITY',
      }),
      ...Array.from({ length: 30 }, (_, i) =>
        entityEvent({
          id: `ent-acme-${i}`,
          slug: `acme-${i}`,
          name: `Acme Corp ${String(i).padStart(2, '0')}`,
          entity_type: 'COMPANY',
        }),
      ),
    ]);
    await catchUp(db, store, entitiesProjection);
  });
  afterAll(async () => {
    await app.close();
    await store.close();
    await drop();
  });

  const get = (url: string, query: Record<string, string> = {}) => app.inject({ url, query, headers });

  it('serves an entity by id and by slug', async () => {
    const byId = await get('/v1/entities/ent-jensen');
    expect(byId.statusCode).toBe(200);
    expect(byId.json()).toEqual({
      id: 'ent-jensen',
      name: 'Jensen Huang',
      slug: 'jensen-huang',
      entity_type: 'PERSON',
      aliases: ['Jensen'],
      image_url: 'https://img.example/jensen.png',
      person: { id: 'ent-jensen', title: 'CEO', company: 'NVIDIA' },
      type: { name: 'Person', slug: 'person' },
    });
    expect((await get('/v1/entities/jensen-huang')).json().id).toBe('ent-jensen');
  });

  it('answers 404 problem for an unknown entity', async () => {
    const response = await get('/v1/entities/nobody');
    expect(response.statusCode).toBe(404);
    expect(response.json().error_code).toBe('entity_not_found');
  });

  it('keeps the newest version when an older upsert arrives late', async () => {
    await ingestEvents(store, [
      entityEvent({ id: 'ent-jen', slug: 'jen-psaki', name: 'Jennifer Psaki' }, '2026-11-21T10:00:00Z'),
      entityEvent({ id: 'ent-jen', slug: 'jen-psaki', name: 'Jen Psaki (old)' }, '2026-11-19T10:00:00Z'),
    ]);
    await catchUp(db, store, entitiesProjection);
    expect((await get('/v1/entities/ent-jen')).json().name).toBe('Jennifer Psaki');
  });

  it('keeps a slug with the entity that claimed it first, whatever a later claimant says, until it lets go', async () => {
    const slug = 'orbital-dynamics';
    await ingestEvents(store, [
      entityEvent({ id: 'ent-orbital', slug, name: 'Orbital Dynamics', entity_type: 'COMPANY' }),
    ]);
    await catchUp(db, store, entitiesProjection);
    await ingestEvents(store, [
      entityEvent({ id: 'ent-impostor', slug, name: 'Orbital Dynamics Impostor' }, '2026-11-21T09:59:59Z'),
    ]);
    await catchUp(db, store, entitiesProjection);
    expect((await get(`/v1/entities/${slug}`)).json().id).toBe('ent-orbital');
    // A newer version of the first holder keeps it.
    await ingestEvents(store, [
      entityEvent(
        { id: 'ent-orbital', slug, name: 'Orbital Dynamics Inc', entity_type: 'COMPANY' },
        '2026-11-21T10:00:00Z',
      ),
    ]);
    await catchUp(db, store, entitiesProjection);
    expect((await get(`/v1/entities/${slug}`)).json()).toMatchObject({
      id: 'ent-orbital',
      name: 'Orbital Dynamics Inc',
    });
    // Once it moves to another slug, the next claimant holds this one.
    await ingestEvents(store, [
      entityEvent(
        { id: 'ent-orbital', slug: 'orbital', name: 'Orbital', entity_type: 'COMPANY' },
        '2026-11-21T11:00:00Z',
      ),
    ]);
    await catchUp(db, store, entitiesProjection);
    expect((await get(`/v1/entities/${slug}`)).json().id).toBe('ent-impostor');
  });

  it("forgets an entity's old names once it is renamed", async () => {
    await ingestEvents(store, [
      entityEvent(
        { id: 'ent-rename', slug: 'quasar-labs', name: 'Quasarlabs Incorporated' },
        '2026-11-20T10:00:00Z',
      ),
    ]);
    await catchUp(db, store, entitiesProjection);
    expect(
      (await get('/v1/entities/search', { q: 'quasarlabs' })).json().data.map((r: { id: string }) => r.id),
    ).toContain('ent-rename');
    await ingestEvents(store, [
      entityEvent({ id: 'ent-rename', slug: 'quasar-labs', name: 'Zephyr Dynamics' }, '2026-11-21T10:00:00Z'),
    ]);
    await catchUp(db, store, entitiesProjection);
    const old = (await get('/v1/entities/search', { q: 'quasarlabs inc' })).json().data;
    expect(
      old.filter(
        (r: { id: string; match_quality: string }) => r.id === 'ent-rename' && r.match_quality !== 'fuzzy',
      ),
    ).toEqual([]);
    const current = (await get('/v1/entities/search', { q: 'zephyr' })).json().data;
    expect(current[0]).toMatchObject({ id: 'ent-rename', match_quality: 'prefix' });
  });

  it('ranks an exact name first, then prefixes, then fuzzy matches, each with match_quality', async () => {
    const page = (await get('/v1/entities/search', { q: 'jensen' })).json();
    expect(page.data[0]).toMatchObject({ id: 'ent-jensen', match_quality: 'exact', type: 'person' });
    const prefix = (await get('/v1/entities/search', { q: 'jen' })).json();
    expect(prefix.data.map((r: { match_quality: string }) => r.match_quality)).toEqual(['prefix', 'prefix']);
    const fuzzy = (await get('/v1/entities/search', { q: 'Jensn Huang' })).json();
    expect(fuzzy.data[0]).toMatchObject({ id: 'ent-jensen', match_quality: 'fuzzy' });
  });

  it('finds a company by ticker, domain and name, with its company block', async () => {
    for (const q of ['NVDA', 'nvidia.com', 'Nvidia']) {
      const [first] = (await get('/v1/entities/search', { q })).json().data;
      expect(first).toMatchObject({ id: 'ent-nvidia', type: 'company', match_quality: 'exact' });
      expect(first.company).toMatchObject({ domain: 'nvidia.com', ticker: 'NVDA', name: 'NVIDIA' });
    }
  });

  it("gives a result's social_links from the entity's external links that have a URL", async () => {
    const [jensen] = (await get('/v1/entities/search', { q: 'jensen' })).json().data;
    expect(jensen.social_links).toEqual([{ platform: 'x', url: 'https://x.example/jensenhuang' }]);
    const [nvidia] = (await get('/v1/entities/search', { q: 'nvidia' })).json().data;
    expect(nvidia.social_links).toEqual([]);
  });

  it('matches accents either way', async () => {
    const [first] = (await get('/v1/entities/search', { q: 'zoe saldana' })).json().data;
    expect(first).toMatchObject({ id: 'ent-zoe', match_quality: 'exact' });
  });

  it('filters by type', async () => {
    const page = (
      await get('/v1/entities/search', { q: 'artificial', type: 'knowledge_graph_entity' })
    ).json();
    expect(page.data).toHaveLength(1);
    expect(page.data[0].knowledge_graph_entity).toMatchObject({
      id: 'ent-ai',
      slug: 'artificial-intelligence',
    });
    expect((await get('/v1/entities/search', { q: 'artificial', type: 'person' })).json().data).toEqual([]);
  });

  it('pages through results with a cursor bound to the search', async () => {
    const first = (await get('/v1/entities/search', { q: 'acme corp', limit: '20' })).json();
    expect(first.data).toHaveLength(20);
    expect(first.has_more).toBe(true);
    const second = (
      await get('/v1/entities/search', { q: 'acme corp', limit: '20', cursor: first.cursor })
    ).json();
    expect(second.data).toHaveLength(10);
    expect(second.has_more).toBe(false);
    const ids = [...first.data, ...second.data].map((r: { id: string }) => r.id);
    expect(new Set(ids).size).toBe(30);
    const reused = await get('/v1/entities/search', { q: 'jensen', cursor: first.cursor });
    expect(reused.statusCode).toBe(400);
    expect(reused.json().error_code).toBe('invalid_cursor');
  });

  it('requires q of at least one character', async () => {
    for (const query of [{}, { q: '' }, { q: '   ' }, { q: '@' }] as Record<string, string>[]) {
      const response = await get('/v1/entities/search', query);
      expect(response.statusCode).toBe(400);
      expect(response.json().errors[0].location).toBe('query.q');
    }
  });
});
