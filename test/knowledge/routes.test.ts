import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { entityMentionsProjection } from '../../projections/entity_mentions/projection.ts';
import type { Db } from '../../src/db/db.ts';
import { entityRoutes } from '../../src/entities/routes.ts';
import type { EventStore } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { validateEvent } from '../../src/ingestion/validate.ts';
import { knowledgeRoutes } from '../../src/knowledge/routes.ts';
import { entityEvent, episodeEvent } from '../fixtures/events.ts';
import { companyReferences } from '../support/company-refs.ts';
import { createDb, ENGINES } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';
import { catchUp } from '../support/projections.ts';

const JENSEN = entityEvent({
  id: 'ent-jensen',
  slug: 'jensen-huang',
  name: 'Jensen Huang',
  aliases: ['Jensen'],
  description: 'Co-founder of NVIDIA.',
  person: {
    current_role: { company: 'NVIDIA', title: 'CEO', started_at: '1993-04-05' },
    roles: [{ company: 'LSI Logic', title: 'Director', started_at: '1985-01-01', ended_at: '1993-01-01' }],
  },
  external_links: [
    { platform: 'wikidata', identifier: 'Q305177', url: 'https://www.wikidata.org/wiki/Q305177' },
  ],
});
const NVIDIA = entityEvent({
  id: 'ent-nvidia',
  slug: 'nvidia',
  name: 'NVIDIA',
  entity_type: 'COMPANY',
  image_url: 'https://img.example/nvidia-entity.png',
  company: {
    domain: 'nvidia.com',
    ticker: 'NVDA',
    cik: '0001045810',
    qid: 'Q182477',
    description: 'Maker of GPUs.',
    image_url: 'https://img.example/nvidia.png',
    image_mode: 'CUSTOM',
  },
});

const NVIDIA_REFS = { id: 'ent-nvidia', slug: 'nvidia', domain: 'nvidia.com' };

describe.each(ENGINES)('people and companies on %s', (engine) => {
  let db: Db;
  let drop: () => Promise<void>;
  let store: EventStore;
  let app: FastifyInstance;
  let headers: Record<string, string>;

  beforeAll(async () => {
    ({ db, drop } = await createDb(engine));
    store = createPostgresEventStore(db);
    app = await buildHttpApp({
      db,
      cursorKey: Buffer.alloc(32, 4),
      routes: [knowledgeRoutes(), entityRoutes()],
    });
    headers = (await createTenant(db)).headers;
    await ingestEvents(store, [
      JENSEN,
      NVIDIA,
      entityEvent({
        id: 'ent-lisa',
        slug: 'lisa-su',
        name: 'Lisa Su',
        person: { title: 'CEO', company: 'AMD' },
      }),
      entityEvent({
        id: 'ent-bill',
        slug: 'bill-dally',
        name: 'Bill Dally',
        person: { current_role: { company: 'nvidia.com', title: 'Chief Scientist' } },
      }),
      entityEvent({
        id: 'ent-amd',
        slug: 'amd',
        name: 'AMD',
        entity_type: 'COMPANY',
        company: { domain: 'amd.com', ticker: 'AMD', cik: '2488', image_mode: 'NONE' },
        image_url: 'https://img.example/amd-entity.png',
      }),
      entityEvent({
        id: 'ent-apple',
        slug: 'apple',
        name: 'Apple',
        entity_type: 'COMPANY',
        company: { ticker: 'AAPL' },
      }),
      entityEvent({
        id: 'ent-ai',
        slug: 'ai',
        name: 'Artificial Intelligence',
        entity_type: 'KNOWLEDGE_GRAPH_ENTITY',
      }),
      ...Array.from({ length: 12 }, (_, i) =>
        entityEvent({ id: `ent-p${i}`, slug: `person-${i}`, name: `Person ${String(i).padStart(2, '0')}` }),
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
  const ids = async (url: string, query: Record<string, string> = {}) => {
    const response = await get(url, query);
    expect(response.statusCode).toBe(200);
    return response.json().data.map((item: { id: string }) => item.id);
  };

  describe('ingestion of the entity.upserted extensions', () => {
    it('accepts roles, links and company identifiers, and rejects malformed ones naming the field', () => {
      expect(validateEvent(JENSEN)).toEqual([]);
      expect(validateEvent(NVIDIA)).toEqual([]);
      const bad = entityEvent({
        id: 'x',
        name: 'X',
        entity_type: 'COMPANY',
        company: { cik: 'CIK1', qid: '182477', image_mode: 'SOMETIMES' as 'NONE' },
        external_links: [{ url: 'https://x.example' } as unknown as { platform: string }],
      });
      expect(validateEvent(bad, '/events/0').map((e) => e.location)).toEqual(
        expect.arrayContaining([
          '/events/0/entity/company/cik',
          '/events/0/entity/company/qid',
          '/events/0/entity/company/image_mode',
          '/events/0/entity/external_links/0/platform',
        ]),
      );
    });
  });

  it('lists the people and companies routes in /openapi.json with their parameters', async () => {
    const { paths } = (await app.inject({ url: '/openapi.json' })).json();
    const names = (path: string) => paths[path].get.parameters.map((p: { name: string }) => p.name).sort();
    expect(names('/v1/people')).toEqual(['company_id', 'cursor', 'limit', 'q']);
    expect(names('/v1/people/{id}')).toEqual(['id']);
    expect(names('/v1/companies')).toEqual([
      'cik',
      'cursor',
      'domain',
      'entity_id',
      'limit',
      'q',
      'qid',
      'ticker',
    ]);
    expect(names('/v1/companies/{id}')).toEqual(['id']);
  });

  describe('GET /v1/people/{id}', () => {
    it('serves a person by id and by slug with roles and links', async () => {
      const byId = await get('/v1/people/ent-jensen');
      expect(byId.statusCode).toBe(200);
      expect(byId.json()).toEqual({
        id: 'ent-jensen',
        name: 'Jensen Huang',
        slug: 'jensen-huang',
        description: 'Co-founder of NVIDIA.',
        aliases: ['Jensen'],
        title: 'CEO',
        company: 'NVIDIA',
        current_role: { company: 'NVIDIA', title: 'CEO', started_at: '1993-04-05' },
        roles: [
          { company: 'LSI Logic', title: 'Director', started_at: '1985-01-01', ended_at: '1993-01-01' },
        ],
        external_links: [
          { platform: 'wikidata', identifier: 'Q305177', url: 'https://www.wikidata.org/wiki/Q305177' },
        ],
      });
      expect((await get('/v1/people/jensen-huang')).json()).toEqual(byId.json());
    });

    it('answers 404 person_not_found for an unknown id and for a company', async () => {
      for (const id of ['nobody', 'ent-nvidia']) {
        const response = await get(`/v1/people/${id}`);
        expect(response.statusCode).toBe(404);
        expect(response.json()).toMatchObject({ error_code: 'person_not_found' });
      }
    });
  });

  describe('GET /v1/people', () => {
    it('lists people by name, never companies or topics', async () => {
      const all = await ids('/v1/people', { limit: '100' });
      expect(all).toHaveLength(15);
      expect(all.slice(0, 3)).toEqual(['ent-bill', 'ent-jensen', 'ent-lisa']);
    });

    it('searches by q forgivingly, best match first, with match_quality', async () => {
      const exact = (await get('/v1/people', { q: 'Jensen Huang' })).json().data;
      expect(exact[0]).toMatchObject({ id: 'ent-jensen', match_quality: 'exact' });
      expect((await get('/v1/people', { q: 'jens' })).json().data[0]).toMatchObject({
        id: 'ent-jensen',
        match_quality: 'prefix',
      });
      expect((await get('/v1/people', { q: 'Jensn Huang' })).json().data[0]).toMatchObject({
        id: 'ent-jensen',
        match_quality: 'fuzzy',
      });
    });

    it('filters by company_id (any company reference), current and past roles alike', async () => {
      for (const company of companyReferences(NVIDIA_REFS))
        expect(await ids('/v1/people', { company_id: company }), company).toEqual(['ent-bill', 'ent-jensen']);
      expect(await ids('/v1/people', { company_id: 'amd.com' })).toEqual(['ent-lisa']);
      expect(await ids('/v1/people', { company_id: 'nvidia', q: 'bill' })).toEqual(['ent-bill']);
      const unknown = await get('/v1/people', { company_id: 'nope.example' });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json()).toMatchObject({ error_code: 'company_not_found' });
    });

    it('pages through people with the signed cursor', async () => {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 10; pages++) {
        const body = (await get('/v1/people', { q: 'person', limit: '5', ...(cursor && { cursor }) })).json();
        seen.push(...body.data.map((p: { id: string }) => p.id));
        cursor = body.cursor;
        if (!body.has_more) break;
      }
      expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => `ent-p${i}`));
      const first = (await get('/v1/people', { q: 'person', limit: '5' })).json();
      expect((await get('/v1/people', { q: 'other', cursor: first.cursor })).json()).toMatchObject({
        error_code: 'invalid_cursor',
      });
    });

    it.each([
      [{ q: 'x'.repeat(201) }, 'query.q'],
      [{ q: '' }, 'query.q'],
      [{ q: '  ' }, 'query.q'],
      [{ limit: '0' }, 'query.limit'],
      [{ limit: '101' }, 'query.limit'],
      [{ cursor: 'forged.cursor' }, 'query.cursor'],
    ])('refuses %o with 400 naming the parameter', async (query, location) => {
      const response = await get('/v1/people', query);
      expect(response.statusCode).toBe(400);
      expect(response.json().errors[0].location).toBe(location);
    });
  });

  describe('GET /v1/companies/{id}', () => {
    const nvidia = {
      id: 'ent-nvidia',
      name: 'NVIDIA',
      slug: 'nvidia',
      entity_id: 'ent-nvidia',
      description: 'Maker of GPUs.',
      domain: 'nvidia.com',
      image_url: 'https://img.example/nvidia.png',
      image_mode: 'CUSTOM',
      ticker: 'NVDA',
      cik: '0001045810',
      qid: 'Q182477',
    };

    it('serves a company by id, domain (any case, with scheme, www. or path) and entity slug', async () => {
      for (const id of companyReferences(NVIDIA_REFS)) {
        const response = await get(`/v1/companies/${encodeURIComponent(id)}`);
        expect(response.statusCode, id).toBe(200);
        expect(response.json()).toEqual(nvidia);
      }
    });

    it('suppresses the entity image of a company whose image_mode is NONE', async () => {
      const amd = (await get('/v1/companies/amd.com')).json();
      expect(amd).toMatchObject({ id: 'ent-amd', image_mode: 'NONE' });
      expect(amd).not.toHaveProperty('image_url');
    });

    it('answers 404 company_not_found for an unknown id and for a person', async () => {
      for (const id of ['nope.example', 'jensen-huang']) {
        const response = await get(`/v1/companies/${id}`);
        expect(response.statusCode).toBe(404);
        expect(response.json()).toMatchObject({ error_code: 'company_not_found' });
      }
    });
  });

  describe('GET /v1/companies', () => {
    it('lists companies by name, and filters by q, ticker, domain, cik, qid and entity_id', async () => {
      expect(await ids('/v1/companies')).toEqual(['ent-amd', 'ent-apple', 'ent-nvidia']);
      expect(await ids('/v1/companies', { q: 'nvidea' })).toEqual(['ent-nvidia']);
      expect(await ids('/v1/companies', { ticker: 'nvda,AAPL' })).toEqual(['ent-apple', 'ent-nvidia']);
      expect(await ids('/v1/companies', { domain: 'AMD.com, nvidia.com' })).toEqual([
        'ent-amd',
        'ent-nvidia',
      ]);
      expect(await ids('/v1/companies', { cik: '1045810' })).toEqual(['ent-nvidia']);
      expect(await ids('/v1/companies', { cik: '0000002488' })).toEqual(['ent-amd']);
      expect(await ids('/v1/companies', { qid: 'q182477' })).toEqual(['ent-nvidia']);
      expect(await ids('/v1/companies', { entity_id: 'ent-apple,amd' })).toEqual(['ent-amd', 'ent-apple']);
      expect(await ids('/v1/companies', { ticker: 'NVDA,AMD', domain: 'amd.com' })).toEqual(['ent-amd']);
      expect(await ids('/v1/companies', { ticker: 'ZZZZ' })).toEqual([]);
    });

    it('pages through companies', async () => {
      const first = (await get('/v1/companies', { limit: '2' })).json();
      expect(first).toMatchObject({ has_more: true });
      const second = (await get('/v1/companies', { limit: '2', cursor: first.cursor })).json();
      expect([...first.data, ...second.data].map((c: { id: string }) => c.id)).toEqual([
        'ent-amd',
        'ent-apple',
        'ent-nvidia',
      ]);
      expect(second.has_more).toBe(false);
    });

    it.each(['ticker', 'domain', 'cik', 'qid', 'entity_id'])(
      'refuses more than 100 values in %s with 400 naming the parameter',
      async (name) => {
        const response = await get('/v1/companies', {
          [name]: Array.from({ length: 101 }, (_, i) => `v${i}`).join(','),
        });
        expect(response.statusCode).toBe(400);
        expect(response.json()).toMatchObject({
          error_code: 'invalid_parameter',
          errors: [{ location: `query.${name}` }],
        });
        const hundred = await get('/v1/companies', {
          [name]: Array.from({ length: 100 }, (_, i) => `v${i}`).join(','),
        });
        expect(hundred.statusCode).toBe(200);
      },
    );

    it('refuses an empty list and a long q with 400', async () => {
      expect((await get('/v1/companies', { ticker: ',' })).json().errors[0].location).toBe('query.ticker');
      expect((await get('/v1/companies', { q: 'x'.repeat(201) })).json().errors[0].location).toBe('query.q');
    });
  });

  describe('entity search mentions', () => {
    it('counts distinct episodes whose newest version mentions the entity or links a speaker to it', async () => {
      const mentioning = (id: string, entityIds: string[], occurredAt = '2026-11-20T10:00:00Z') => ({
        ...episodeEvent({
          id,
          mentions: entityIds.map((entityId) => ({ entity_id: entityId, lines: [1] })),
        }),
        occurred_at: occurredAt,
      });
      await ingestEvents(store, [
        mentioning('ep-1', ['ent-nvidia']),
        mentioning('ep-2', ['ent-nvidia', 'ent-amd']),
        // Sent twice: still one episode.
        mentioning('ep-2', ['ent-nvidia', 'ent-amd'], '2026-11-20T11:00:00Z'),
        // Re-sent without the mention: no longer counts.
        mentioning('ep-3', ['ent-nvidia']),
        mentioning('ep-3', [], '2026-11-20T12:00:00Z'),
        episodeEvent({
          id: 'ep-4',
          speakers: [{ id: 'spk-guest', name: 'Jensen Huang', role: 'GUEST', entity_id: 'ent-jensen' }],
        }),
      ]);
      await catchUp(db, store, entityMentionsProjection);
      // An older version arriving late changes nothing.
      await ingestEvents(store, [mentioning('ep-3', ['ent-nvidia'], '2026-11-20T09:00:00Z')]);
      await catchUp(db, store, entityMentionsProjection);
      const mentions = async (q: string, type: string) =>
        (await get('/v1/entities/search', { q, type })).json().data[0].mentions;
      expect(await mentions('nvidia', 'company')).toEqual({ news_articles: 0, podcast_episodes: 2 });
      expect(await mentions('amd', 'company')).toEqual({ news_articles: 0, podcast_episodes: 1 });
      expect(await mentions('Jensen Huang', 'person')).toEqual({ news_articles: 0, podcast_episodes: 1 });
      expect(await mentions('apple', 'company')).toEqual({ news_articles: 0, podcast_episodes: 0 });
    });

    it("shows a company result as CompanyCompact, preferring the company's own description and logo", async () => {
      const [nvidia] = (await get('/v1/entities/search', { q: 'nvda' })).json().data;
      expect(nvidia.company).toEqual({
        id: 'ent-nvidia',
        name: 'NVIDIA',
        description: 'Maker of GPUs.',
        domain: 'nvidia.com',
        image_url: 'https://img.example/nvidia.png',
        image_mode: 'CUSTOM',
        slug: 'nvidia',
        ticker: 'NVDA',
      });
      const [amd] = (await get('/v1/entities/search', { q: 'amd.com' })).json().data;
      expect(amd.company).toMatchObject({ image_mode: 'NONE' });
      expect(amd.company).not.toHaveProperty('image_url');
    });

    it('resolves a company domain on the entity read', async () => {
      const response = await get('/v1/entities/nvidia.com');
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ id: 'ent-nvidia', company: { domain: 'nvidia.com' } });
    });
  });
});
