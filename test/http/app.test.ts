import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHttpApp } from '../../src/http/app.ts';
import { pageOf, pageQuery, toPage } from '../../src/http/pagination.ts';
import { createKey, revokeKey } from '../../src/platform/keys.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';

const ITEMS = Array.from({ length: 60 }, (_, i) => ({ n: i + 1 }));

/** A route plugin exercising the shared infrastructure the way capability routes do. */
async function fixtureRoutes(app: FastifyInstance) {
  app.get(
    '/v1/fixture/items',
    {
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { ...pageQuery, 'api-key': { type: 'string' } },
        },
        response: { 200: pageOf({ type: 'object', properties: { n: { type: 'integer' } } }) },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query as { limit: number; cursor?: string };
      const after = cursor ? app.cursors.decode<{ n: number }>(cursor).n : 0;
      const rows = ITEMS.filter((item) => item.n > after).slice(0, limit + 1);
      return toPage(
        rows,
        limit,
        app.cursors,
        (row) => ({ n: row.n }),
        (row) => row,
      );
    },
  );
  app.post(
    '/v1/fixture/things',
    {
      schema: {
        body: {
          type: 'object',
          required: ['title', 'tags'],
          additionalProperties: false,
          properties: {
            title: { type: 'string', minLength: 1 },
            tags: { type: 'array', items: { type: 'string' } },
          },
        },
      },
    },
    async () => ({ ok: true }),
  );
  app.get('/v1/fixture/boom', async () => {
    throw new Error('secret internal detail');
  });
}

describe('HTTP foundation', () => {
  let testDb: TestDb;
  let app: FastifyInstance;
  let tenant: Awaited<ReturnType<typeof createTenant>>;

  beforeAll(async () => {
    testDb = await createTestDb();
    app = await buildHttpApp({ db: testDb.db, cursorKey: Buffer.alloc(32, 7), routes: [fixtureRoutes] });
    tenant = await createTenant(testDb.db);
  });
  afterAll(async () => {
    await app.close();
    await testDb.drop();
  });

  it('answers an unknown route with a 404 problem', async () => {
    const response = await app.inject({ url: '/v1/nowhere', headers: tenant.headers });
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.json()).toMatchObject({ status: 404, error_code: 'route_not_found', title: 'Not Found' });
  });

  it('rejects a request without a key on a protected route with a 401 problem', async () => {
    const response = await app.inject({ url: '/v1/fixture/items' });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ error_code: 'unauthorized' });
  });

  it('needs the key however the path is spelled: percent-encoded letters do not make a route public', async () => {
    for (const url of ['/%761/fixture/items', '/v%31/fixture/items', '/V1/fixture/items']) {
      const response = await app.inject({ url });
      expect([401, 404]).toContain(response.statusCode);
      expect(response.statusCode === 404 || response.json().error_code === 'unauthorized').toBe(true);
    }
    expect((await app.inject({ url: '/%761/fixture/items' })).statusCode).toBe(401);
  });

  it('accepts the key as X-API-Key, as a bearer token and as the api-key query parameter', async () => {
    const byHeader = await app.inject({ url: '/v1/fixture/items', headers: { 'x-api-key': tenant.key } });
    const byBearer = await app.inject({
      url: '/v1/fixture/items',
      headers: { authorization: `Bearer ${tenant.key}` },
    });
    const byQuery = await app.inject({ url: `/v1/fixture/items?api-key=${tenant.key}` });
    expect([byHeader.statusCode, byBearer.statusCode, byQuery.statusCode]).toEqual([200, 200, 200]);
  });

  it('rejects a malformed, unknown or revoked key with 401', async () => {
    const key = await createKey(testDb.db, { kind: 'project', projectId: tenant.project.id });
    const forged = key.key.slice(0, -1) + (key.key.endsWith('a') ? 'b' : 'a');
    await revokeKey(testDb.db, key.id);
    for (const presented of ['nonsense', forged, key.key]) {
      const response = await app.inject({ url: '/v1/fixture/items', headers: { 'x-api-key': presented } });
      expect(response.statusCode).toBe(401);
    }
  });

  it('keeps ingest keys out of project routes', async () => {
    const ingest = await createKey(testDb.db, { kind: 'ingest' });
    const response = await app.inject({ url: '/v1/fixture/items', headers: { 'x-api-key': ingest.key } });
    expect(response.statusCode).toBe(403);
    expect(response.json().error_code).toBe('project_key_required');
  });

  it('pages with the envelope, the default limit of 25 and a cursor that walks every item once', async () => {
    const seen: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const response = await app.inject({
        url: '/v1/fixture/items',
        query: cursor ? { cursor } : {},
        headers: tenant.headers,
      });
      const page = response.json();
      expect(page.data.length).toBeLessThanOrEqual(25);
      seen.push(...page.data.map((item: { n: number }) => item.n));
      cursor = page.cursor;
      expect(page.has_more).toBe(cursor !== undefined);
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(ITEMS.map((item) => item.n));
  });

  it('rejects a limit outside 1–100 with a 400 naming the parameter', async () => {
    for (const limit of ['0', '101', 'many']) {
      const response = await app.inject({
        url: '/v1/fixture/items',
        query: { limit },
        headers: tenant.headers,
      });
      expect(response.statusCode).toBe(400);
      const body = response.json();
      expect(body.error_code).toBe('invalid_parameter');
      expect(body.errors[0]).toMatchObject({ location: 'query.limit' });
    }
  });

  it('rejects a tampered cursor with 400 invalid_cursor', async () => {
    const first = (await app.inject({ url: '/v1/fixture/items', headers: tenant.headers })).json();
    const [body, mac] = first.cursor.split('.');
    const forgedBody = Buffer.from(JSON.stringify({ n: 0 })).toString('base64url');
    for (const cursor of [`${forgedBody}.${mac}`, `${body}.AAAA${mac.slice(4)}`, 'garbage', `${body}`]) {
      const response = await app.inject({
        url: '/v1/fixture/items',
        query: { cursor },
        headers: tenant.headers,
      });
      expect(response.statusCode).toBe(400);
      expect(response.json().error_code).toBe('invalid_cursor');
    }
  });

  it('answers a body that breaks the schema with 422 and one error per problem, as JSON pointers with values', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/v1/fixture/things',
      headers: tenant.headers,
      payload: { title: '', tags: ['ok', 5], extra: true },
    });
    expect(response.statusCode).toBe(422);
    const body = response.json();
    expect(body.error_code).toBe('validation_failed');
    expect(body.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ location: '/title', value: '' }),
        expect.objectContaining({ location: '/tags/1', value: 5 }),
        expect.objectContaining({ location: '/extra', message: 'is not a known property' }),
      ]),
    );
  });

  it('refuses text PostgreSQL cannot store (NUL, lone surrogates) anywhere in a request, naming where', async () => {
    const body = await app.inject({
      method: 'POST',
      url: '/v1/fixture/things',
      headers: { ...tenant.headers, 'content-type': 'application/json' },
      payload: '{"title":"a\\u0000b","tags":["ok","\\ud800"]}',
    });
    expect(body.statusCode).toBe(422);
    expect(body.json()).toMatchObject({
      error_code: 'invalid_text',
      errors: [
        expect.objectContaining({ location: '/title' }),
        expect.objectContaining({ location: '/tags/1' }),
      ],
    });
    const query = await app.inject({ url: '/v1/fixture/items?cursor=a%00b', headers: tenant.headers });
    expect(query.statusCode).toBe(400);
    expect(query.json().errors[0].location).toBe('query.cursor');
  });

  it('answers malformed JSON with a 400 problem', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/v1/fixture/things',
      headers: { ...tenant.headers, 'content-type': 'application/json' },
      payload: '{"title": ',
    });
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toMatch(/problem\+json/);
  });

  it('hides the details of an unexpected failure behind a 500 problem', async () => {
    const response = await app.inject({ url: '/v1/fixture/boom', headers: tenant.headers });
    expect(response.statusCode).toBe(500);
    expect(response.body).not.toContain('secret internal detail');
    expect(response.json()).toMatchObject({ error_code: 'internal_error', status: 500 });
  });

  it('serves /healthz, and /readyz once the database answers and migrations are applied', async () => {
    expect((await app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const ready = await app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ status: 'ready', checks: { database: 'ok', migrations: 'ok' } });
  });

  it('reports not ready while migrations are pending', async () => {
    const empty = await createTestDb({ migrated: false });
    const bare = await buildHttpApp({ db: empty.db, cursorKey: Buffer.alloc(32), routes: [] });
    try {
      const response = await bare.inject({ url: '/readyz' });
      expect(response.statusCode).toBe(503);
      expect(response.json().checks.migrations).toBe('pending');
    } finally {
      await bare.close();
      await empty.drop();
    }
  });

  it('publishes an OpenAPI 3.1 document generated from the route schemas', async () => {
    const response = await app.inject({ url: '/openapi.json' });
    expect(response.statusCode).toBe(200);
    const document = response.json();
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.version).toBe('0.1.0');
    expect(document.paths['/v1/fixture/items'].get.parameters.map((p: { name: string }) => p.name)).toContain(
      'limit',
    );
    expect(document.paths['/v1/fixture/things'].post.requestBody).toBeDefined();
  });
});

describe('validation in plugins that add shared schemas', () => {
  it('still checks bodies without type coercion', async () => {
    const testDb = await createTestDb();
    const app = await buildHttpApp({
      db: testDb.db,
      cursorKey: Buffer.alloc(32),
      routes: [
        async (child) => {
          child.addSchema({ $id: 'Title', type: 'string', minLength: 1 });
          child.post(
            '/v1/fixture/shared',
            {
              schema: {
                body: { type: 'object', required: ['title'], properties: { title: { $ref: 'Title#' } } },
              },
            },
            async (request) => request.body,
          );
        },
      ],
    });
    try {
      const tenant = await createTenant(testDb.db);
      const coerced = await app.inject({
        method: 'POST',
        url: '/v1/fixture/shared',
        headers: tenant.headers,
        payload: { title: 5 },
      });
      expect(coerced.statusCode).toBe(422);
      const ok = await app.inject({
        method: 'POST',
        url: '/v1/fixture/shared',
        headers: tenant.headers,
        payload: { title: 'x' },
      });
      expect(ok.json()).toEqual({ title: 'x' });
    } finally {
      await app.close();
      await testDb.drop();
    }
  });
});
