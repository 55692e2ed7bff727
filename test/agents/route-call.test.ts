import Fastify, { type FastifyError } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callRoute } from '../../src/agents/route-call.ts';

describe('callRoute', () => {
  const app = Fastify();
  const finished: string[] = [];

  beforeAll(async () => {
    app.addHook('onRequest', async (request, reply) => {
      reply.header('x-seen-host', request.headers.host ?? '');
      if (request.headers['x-refuse'] !== undefined) reply.code(401).send({ error_code: 'unauthorized' });
    });
    app.addHook('onResponse', async (request) => {
      finished.push(request.url);
    });
    app.setErrorHandler((error: FastifyError, _request, reply) => {
      reply
        .code(error.statusCode ?? 500)
        .type('application/problem+json')
        .send({ error_code: error.validation ? 'invalid_parameter' : 'failed', detail: error.message });
    });
    app.get(
      '/things/:id',
      {
        schema: {
          params: { type: 'object', properties: { id: { type: 'string', maxLength: 5 } } },
          querystring: { type: 'object', properties: { limit: { type: 'integer', default: 10 } } },
          response: {
            200: { type: 'object', properties: { id: { type: 'string' }, limit: { type: 'integer' } } },
          },
        },
      },
      async (request) => {
        const { id } = request.params as { id: string };
        if (id === 'boom') throw new Error('it broke');
        return { id, limit: (request.query as { limit: number }).limit, secret: 'not in the schema' };
      },
    );
    app.post(
      '/things',
      { schema: { body: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } } },
      async (request, reply) => reply.code(201).send({ created: (request.body as { name: string }).name }),
    );
    app.get('/text', async (_request, reply) => reply.type('text/plain').send('plain words'));
    await app.ready();
  });
  afterAll(() => app.close());

  const both = async (
    method: 'GET' | 'POST',
    url: string,
    headers: Record<string, string>,
    body?: string,
  ) => {
    const called = await callRoute(app, { method, url, headers: { host: 'localhost', ...headers }, body });
    const injected = await app.inject({
      method,
      url,
      headers: { host: 'localhost', ...headers },
      payload: body,
    });
    return { called, injected };
  };

  it('answers as app.inject does: hooks, coercion, response schema, validation and handler errors', async () => {
    const cases: [method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: string][] = [
      ['GET', '/things/a1?limit=3', {}],
      ['GET', '/things/a1', {}],
      ['GET', '/things/toolongid', {}],
      ['GET', '/things/a1?limit=many', {}],
      ['GET', '/things/boom', {}],
      ['GET', '/things/a1', { 'x-refuse': '1' }],
      ['GET', '/no/such/route', {}],
      ['GET', '/text', {}],
      ['POST', '/things', { 'content-type': 'application/json' }, '{"name":"box"}'],
      ['POST', '/things', { 'content-type': 'application/json' }, '{}'],
      ['POST', '/things', { 'content-type': 'application/json' }, '{"name":'],
    ];
    for (const [method, url, headers, body] of cases) {
      const { called, injected } = await both(method, url, headers, body);
      const label = `${method} ${url} ${body ?? ''}`;
      expect(called.statusCode, label).toBe(injected.statusCode);
      expect(called.body, label).toBe(injected.body);
      expect(called.headers['content-type'], label).toBe(injected.headers['content-type']);
      expect(called.headers['x-seen-host'], label).toBe('localhost');
    }
    expect(
      JSON.parse((await callRoute(app, { method: 'GET', url: '/things/a1', headers: {} })).body),
    ).toEqual({
      id: 'a1',
      limit: 10,
    });
  });

  it('runs the onResponse hooks of the route call', async () => {
    finished.length = 0;
    await callRoute(app, { method: 'GET', url: '/things/a2', headers: {} });
    await new Promise((resolve) => setImmediate(resolve));
    expect(finished).toEqual(['/things/a2']);
  });
});
