import { type AddressInfo, connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFormFields } from '../../src/http/multipart.ts';
import { storableJson, unstorableText } from '../../src/storable-text.ts';
import { episodeEvent } from '../fixtures/events.ts';
import { type FullApp, fullApp } from '../support/app.ts';

const BOUNDARY = 'earshot-boundary';
const FORM = `multipart/form-data; boundary=${BOUNDARY}`;
const MAX_BODY = 10 * 1024 * 1024;

let f: FullApp;
beforeAll(async () => {
  f = await fullApp();
  await f.app.ready();
});
afterAll(async () => {
  await f.close();
});

const alertsUrl = () => `/v1/projects/${f.tenant.project.id}/alerts`;
const alertBody = (overrides: Record<string, unknown> = {}) => ({
  title: 'Jensen on podcasts',
  entities: [{ entity_type: 'PERSON', entity_id: 'ent-jensen' }],
  notifications: [{ type: 'EMAIL', email: 'ops@example.com' }],
  ...overrides,
});

const expectProblem = (
  response: { statusCode: number; headers: Record<string, unknown>; json(): { error_code: string } },
  status: number,
  code: string,
) => {
  expect(response.statusCode).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.json().error_code).toBe(code);
};

async function timeParse(body: string, runs: number) {
  const started = performance.now();
  for (let i = 0; i < runs; i++) await parseFormFields(Buffer.from(body), FORM).catch(() => undefined);
  return (performance.now() - started) / runs;
}

describe('multipart/form-data bodies', () => {
  it('parse in time linear in their size, even when crafted to make a regex backtrack', async () => {
    const small = `${'\n'.repeat(8150)}x`;
    const large = `${'\n'.repeat(81_500)}x`;
    await timeParse(small, 3);
    const smallMs = await timeParse(small, 10);
    const largeMs = await timeParse(large, 2);
    // Quadratic parsing took ~57 ms for 8 KB, so ~5.7 s for 80 KB; linear is well under 1 ms/KB.
    expect(largeMs).toBeLessThan(240);
    expect(largeMs).toBeLessThan(30 * Math.max(smallMs, 1));
  });

  it('still read the RFC 8058 one-click field', async () => {
    const body = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--${BOUNDARY}--\r\n`;
    expect(await parseFormFields(Buffer.from(body), FORM)).toEqual({ 'List-Unsubscribe': 'One-Click' });
  });

  it('answer a crafted or broken form to the public disable route with a 4xx problem', async () => {
    for (const payload of [`${'\n'.repeat(8150)}x`, `--${BOUNDARY}\r\nContent-Disposition: form-data`]) {
      const response = await f.app.inject({
        method: 'POST',
        url: '/v1/alerts/disable',
        headers: { 'content-type': FORM },
        payload,
      });
      expect(response.statusCode).toBeGreaterThanOrEqual(400);
      expect(response.statusCode).toBeLessThan(500);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });

  it('refuse a file part', async () => {
    const body = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="token"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nxyz\r\n--${BOUNDARY}--\r\n`;
    const response = await f.app.inject({
      method: 'POST',
      url: '/v1/alerts/disable',
      headers: { 'content-type': FORM },
      payload: body,
    });
    expectProblem(response, 400, 'malformed_request');
  });
});

describe('deeply nested JSON', () => {
  const deep = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

  it('is refused with 400 naming the limit on a public route, before any walk over it', async () => {
    const response = await f.app.inject({
      method: 'POST',
      url: '/v1/alerts/disable',
      headers: { 'content-type': 'application/json' },
      payload: `{"token":${deep(20_000)}}`,
    });
    expectProblem(response, 400, 'malformed_request');
    expect(response.json().detail).toContain('64');
  });

  it('is refused with 400 on an authenticated route too, objects as well as arrays', async () => {
    const nested = '{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000);
    for (const payload of [nested, `{"title":${deep(65)}}`]) {
      const response = await f.app.inject({
        method: 'POST',
        url: alertsUrl(),
        headers: { ...f.tenant.headers, 'content-type': 'application/json' },
        payload,
      });
      expectProblem(response, 400, 'malformed_request');
    }
  });

  it('is accepted up to the limit, brackets inside strings not counted', async () => {
    const response = await f.app.inject({
      method: 'POST',
      url: alertsUrl(),
      headers: { ...f.tenant.headers, 'content-type': 'application/json' },
      payload: `{"title":${deep(63)},"description":"${'['.repeat(100)}"}`,
    });
    expectProblem(response, 422, 'validation_failed');
  });
});

describe('rejected values in problems', () => {
  it('are cut to a short prefix: a 9 MB title comes back in a small 422', async () => {
    const response = await f.app.inject({
      method: 'POST',
      url: alertsUrl(),
      headers: f.tenant.headers,
      payload: alertBody({ title: 'x'.repeat(9 * 1024 * 1024) }),
    });
    expectProblem(response, 422, 'validation_failed');
    expect(response.body.length).toBeLessThan(2_000);
    const [error] = response.json().errors;
    expect(error).toMatchObject({ location: '/title', value: `${'x'.repeat(100)}…` });
  });

  it('summarise arrays: a 501-event batch is not echoed back', async () => {
    const events = Array.from({ length: 501 }, () => episodeEvent());
    const response = await f.app.inject({
      method: 'POST',
      url: '/v1/ingest/events',
      headers: { 'x-api-key': f.ingestKey },
      payload: { events },
    });
    expectProblem(response, 422, 'validation_failed');
    expect(response.body.length).toBeLessThan(2_000);
    expect(response.json().errors[0]).toMatchObject({ location: '/events', value: '[array of 501 items]' });
  });

  it('keep small values whole', async () => {
    const response = await f.app.inject({
      method: 'POST',
      url: alertsUrl(),
      headers: f.tenant.headers,
      payload: alertBody({
        filters: { languages: ['xx'] },
        notifications: [
          { type: 'EMAIL', email: 'ops@example.com' },
          { type: 'EMAIL', email: 'ops@example.com' },
        ],
      }),
    });
    expect(response.json().errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ location: '/filters/languages/0', value: 'xx' }),
        expect.objectContaining({
          location: '/notifications/1',
          value: { type: 'EMAIL', email: 'ops@example.com' },
        }),
      ]),
    );
  });
});

describe('request bodies', () => {
  it('holding invalid UTF-8 are refused with 400, not stored with U+FFFD', async () => {
    const json = Buffer.from(JSON.stringify(alertBody({ title: 'AB' })));
    const bad = Buffer.from(json.toString().replace('AB', 'A\u0001B'));
    bad[bad.indexOf(1)] = 0xff;
    const response = await f.app.inject({
      method: 'POST',
      url: alertsUrl(),
      headers: { ...f.tenant.headers, 'content-type': 'application/json' },
      payload: bad,
    });
    expectProblem(response, 400, 'malformed_request');
    expect(response.json().detail).toMatch(/UTF-8/);
  });

  it('of an unsupported media type (text/plain) are refused with 415', async () => {
    const response = await f.app.inject({
      method: 'POST',
      url: alertsUrl(),
      headers: { ...f.tenant.headers, 'content-type': 'text/plain' },
      payload: JSON.stringify(alertBody()),
    });
    expectProblem(response, 415, 'unsupported_media_type');
  });

  it('may be 10 MiB exactly; one byte more is 413', async () => {
    const sized = (bytes: number) => {
      const shell = '{"events":[{"type":"nothing","pad":""}]}';
      return shell.replace('"pad":""', `"pad":"${'a'.repeat(bytes - shell.length)}"`);
    };
    const post = (payload: string) =>
      f.app.inject({
        method: 'POST',
        url: '/v1/ingest/events',
        headers: { 'x-api-key': f.ingestKey, 'content-type': 'application/json' },
        payload,
      });
    expect(sized(MAX_BODY)).toHaveLength(MAX_BODY);
    expectProblem(await post(sized(MAX_BODY)), 422, 'invalid_events');
    expectProblem(await post(sized(MAX_BODY + 1)), 413, 'payload_too_large');
  });
});

describe('alert titles', () => {
  it('of only zero-width and other invisible format characters count as empty', async () => {
    const response = await f.app.inject({
      method: 'POST',
      url: alertsUrl(),
      headers: f.tenant.headers,
      payload: alertBody({ title: '\u200B\u200C\u200D \u2060\uFEFF\u00AD' }),
    });
    expectProblem(response, 422, 'validation_failed');
    expect(response.json().errors).toEqual([
      expect.objectContaining({ location: '/title', message: 'must not be empty' }),
    ]);
  });
});

describe('URLs the router cannot take', () => {
  it('answer with problems: invalid percent-encoding is 400, an overlong path parameter 414', async () => {
    const bad = await f.app.inject({ url: '/v1/alerts/%ED%A0%80', headers: f.tenant.headers });
    expectProblem(bad, 400, 'malformed_request');
    const long = await f.app.inject({ url: `/v1/alerts/${'a'.repeat(5000)}`, headers: f.tenant.headers });
    expectProblem(long, 414, 'uri_too_long');
    expect(long.body.length).toBeLessThan(1000);
  });
});

describe('requests the HTTP parser refuses before routing', () => {
  /** Sends `raw` over its own connection and reads what comes back until the server closes it. */
  const exchange = (port: number, raw: string) =>
    new Promise<string>((resolve, reject) => {
      let answer = '';
      const socket = connect(port, '127.0.0.1', () => socket.write(raw));
      socket.on('data', (chunk) => {
        answer += chunk;
      });
      socket.on('close', () => resolve(answer));
      socket.on('error', reject);
    });

  it('answer with problems: a malformed request line or header is 400, headers over 16 KiB 431', async () => {
    await f.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = f.app.server.address() as AddressInfo;
    const key = f.tenant.headers['x-api-key'];
    const cases = [
      [`GET /v1/podcasts?q=a b HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\n\r\n`, 400, 'malformed_request'],
      [`GET /v1/podcasts HTTP/1.1\r\nHost: x\r\nX-Foo: a\u0001b\r\n\r\n`, 400, 'malformed_request'],
      [
        `GET /v1/podcasts?q=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\n\r\n`,
        431,
        'header_fields_too_large',
      ],
    ] as const;
    for (const [raw, status, code] of cases) {
      const answer = await exchange(port, raw);
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      expect(head.split('\r\n')[0]).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
      expect(head).toMatch(/\r\ncontent-type: application\/problem\+json\r\n/i);
      expect(JSON.parse(body)).toMatchObject({ status, error_code: code, errors: null });
    }
  });
});

describe('walks over request values', () => {
  const deep = (depth: number, leaf: unknown) => {
    let value: unknown = leaf;
    for (let i = 0; i < depth; i++) value = i % 2 ? { 'a/b': value } : [value];
    return value;
  };

  it('find unstorable text at any depth without overflowing the stack', () => {
    const found = unstorableText({ ok: 'fine', deep: deep(100_000, 'a\u0000b') }, '');
    expect(found).toHaveLength(1);
    expect(found[0]!.location.startsWith('/deep/a~1b/0/a~1b/0/')).toBe(true);
  });

  it('find nothing in storable values, and every bad key, item and string of a null-prototype object', () => {
    const clean = { s: 'fine', n: [1, null, 'ok', { d: new Date(0) }], e: {} };
    expect(unstorableText(clean, '')).toEqual([]);
    expect(unstorableText('plain', 'query')).toEqual([]);
    const query = Object.assign(Object.create(null) as object, { 'k\uD800': 'v', list: ['ok', 'x\u0000'] });
    expect(unstorableText(query, 'query').map((e) => e.location)).toEqual(['query/k\uD800', 'query/list/1']);
    expect(unstorableText('a\u0000', 'path')).toHaveLength(1);
  });

  it('make values storable at any depth, keys included', () => {
    const cleaned = storableJson({ 'k\u0000': deep(100_000, '\uD800x'), when: new Date(0), n: [1, null] });
    expect(Object.keys(cleaned)).toEqual(['k', 'when', 'n']);
    expect(cleaned.when).toEqual(new Date(0));
    expect(cleaned.n).toEqual([1, null]);
    let node: unknown = (cleaned as Record<string, unknown>).k;
    while (typeof node !== 'string')
      node = Array.isArray(node) ? node[0] : (node as Record<string, unknown>)['a/b'];
    expect(node).toBe('\uFFFDx');
  });
});
