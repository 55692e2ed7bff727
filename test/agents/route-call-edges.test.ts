import { Readable } from 'node:stream';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callRoute } from '../../src/agents/route-call.ts';

describe('callRoute edges', () => {
  const app = Fastify({ bodyLimit: 64 });

  beforeAll(async () => {
    app.post('/echo', async (request) => request.body);
    app.get('/buffer', async (_request, reply) => reply.type('text/plain').send(Buffer.from('é bytes')));
    app.get('/stream', async (_request, reply) =>
      reply.type('text/plain').send(Readable.from(['a', 'b', 'c'].map((s) => Buffer.from(s)))),
    );
    app.get('/stream-fails', async (_request, reply) => {
      let started = false;
      const stream = new Readable({
        read() {
          if (started) return;
          started = true;
          this.push(Buffer.from('part'));
          setImmediate(() => this.destroy(new Error('source broke')));
        },
      });
      return reply.type('text/plain').send(stream);
    });
    app.get('/web-stream', async (_request, reply) =>
      reply.type('text/plain').send(new Response('one web chunk').body),
    );
    app.get('/web-response', async (_request, reply) =>
      reply.send(new Response('{"a":1}', { status: 201, headers: { 'content-type': 'application/json' } })),
    );
    app.get('/hijack-callbacks', async (_request, reply) => {
      reply.hijack();
      const ended = new Promise<void>((resolve) => {
        reply.raw.writeHead(200, { 'content-type': 'text/plain' });
        reply.raw.write('68657820', 'hex');
        reply.raw.end(resolve);
      });
      await ended;
    });
    app.get('/hijack', async (_request, reply) => {
      reply.hijack();
      reply.raw.writeHead(202, { 'content-type': 'text/plain' });
      reply.raw.write('raw ');
      reply.raw.end('answer');
    });
    app.get('/fails-after-headers', async (_request, reply) => {
      reply.raw.writeHead(200, { 'content-type': 'text/plain' });
      throw new Error('too late');
    });
    app.get('/listeners', async (request) => ({
      close: request.raw.socket.listenerCount('close'),
      timeout: request.raw.socket.listenerCount('timeout'),
      meta: '_meta' in request.raw.socket && Boolean(request.raw.socket._meta),
    }));
    app.get('/aborts', async (_request, reply) => {
      reply.hijack();
      reply.raw.destroy(new Error('aborted by the route'));
    });
    app.get('/wait/:n', async (request) => {
      const n = Number((request.params as { n: string }).n);
      await new Promise((resolve) => setTimeout(resolve, n % 7));
      return { n };
    });
    await app.ready();
  });
  afterAll(() => app.close());

  const call = (method: string, url: string, body?: string, headers: Record<string, string> = {}) =>
    callRoute(app, {
      method,
      url,
      headers: { host: 'localhost', ...headers },
      body,
    });

  it('refuses a body over bodyLimit as inject does', async () => {
    const body = JSON.stringify({ text: 'x'.repeat(200) });
    const headers = { 'content-type': 'application/json' };
    const called = await call('POST', '/echo', body, headers);
    const injected = await app.inject({
      method: 'POST',
      url: '/echo',
      headers,
      payload: body,
    });
    expect(called.statusCode).toBe(413);
    expect(called.body).toBe(injected.body);
  });

  it('reads header names in any case, as inject does', async () => {
    const headers = { 'Content-Type': 'application/json' };
    const called = await call('POST', '/echo', '{"a":1}', headers);
    const injected = await app.inject({ method: 'POST', url: '/echo', headers, payload: '{"a":1}' });
    expect(injected.statusCode).toBe(200);
    expect(called.statusCode).toBe(injected.statusCode);
    expect(called.body).toBe(injected.body);
  });

  it('collects Buffer and stream bodies', async () => {
    expect((await call('GET', '/buffer')).body).toBe('é bytes');
    const streamed = await call('GET', '/stream');
    expect(streamed.statusCode).toBe(200);
    expect(streamed.body).toBe('abc');
  });

  it('collects web stream and Response bodies as inject does', async () => {
    for (const url of ['/web-stream', '/web-response']) {
      const called = await call('GET', url);
      const injected = await app.inject({ method: 'GET', url });
      expect(called.statusCode, url).toBe(injected.statusCode);
      expect(called.body, url).toBe(injected.body);
    }
  });

  it('honours the encoding and callback a hijacked route gives write and end', async () => {
    const called = await call('GET', '/hijack-callbacks');
    const injected = await app.inject({ method: 'GET', url: '/hijack-callbacks' });
    expect(injected.body).toBe('hex ');
    expect(called.body).toBe(injected.body);
  });

  it('settles when a streamed body fails midway', async () => {
    await expect(call('GET', '/stream-fails')).rejects.toThrow();
  });

  it('collects what a hijacked route writes itself', async () => {
    const called = await call('GET', '/hijack');
    expect(called.statusCode).toBe(202);
    expect(called.body).toBe('raw answer');
  });

  it('settles when a route fails after its headers went out', async () => {
    // http would throw ERR_HTTP_HEADERS_SENT (inject rejects); the answer is fastify's 500 instead.
    const called = await call('GET', '/fails-after-headers');
    expect(called.statusCode).toBe(500);
    expect(called.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('settles when a route destroys its response with an error', async () => {
    await expect(call('GET', '/aborts')).rejects.toThrow();
  });

  it('keeps concurrent calls apart', async () => {
    const answers = await Promise.all(Array.from({ length: 200 }, (_, n) => call('GET', `/wait/${n}`)));
    expect(answers.map((a) => JSON.parse(a.body).n)).toEqual(Array.from({ length: 200 }, (_, n) => n));
  });

  it('leaves nothing on the shared connection', async () => {
    for (let i = 0; i < 20; i++) await call('GET', '/listeners', undefined, { connection: 'keep-alive' });
    const listeners = JSON.parse((await call('GET', '/listeners')).body);
    expect(listeners).toEqual({ close: 0, timeout: 0, meta: false });
  });
});
