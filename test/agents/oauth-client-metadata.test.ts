import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cacheLifetimeSeconds,
  clientIdUrlProblem,
  createClientMetadataResolver,
  parseMetadataDocument,
} from '../../src/agents/oauth/client-metadata.ts';
import { parseAllowCidrs } from '../../src/webhooks/address-rule.ts';
import { type DocumentServer, startDocumentServer } from './support.ts';

const NOW = new Date('2026-11-29T00:00:00Z');

describe('the client identifier URL rule', () => {
  it('accepts https URLs with a path, a port or a query', () => {
    for (const url of [
      'https://app.example/oauth/client.json',
      'https://app.example:8443/client',
      'https://app.example/client?v=2',
    ])
      expect(clientIdUrlProblem(url)).toBeUndefined();
  });

  it('refuses http, no path, credentials, fragments and dot segments', () => {
    expect(clientIdUrlProblem('http://app.example/client.json')).toContain('must be an https URL');
    expect(clientIdUrlProblem('https://app.example')).toContain('must contain a path');
    expect(clientIdUrlProblem('https://app.example/')).toContain('must contain a path');
    expect(clientIdUrlProblem('https://me:pw@app.example/c.json')).toContain('user name or password');
    expect(clientIdUrlProblem('https://app.example/c.json#x')).toContain('fragment');
    expect(clientIdUrlProblem('https://app.example/a/../c.json')).toContain('path segments');
    expect(clientIdUrlProblem('https://app.example/a/%2E/c.json')).toContain('path segments');
    expect(clientIdUrlProblem(`https://app.example/${'a'.repeat(2000)}`)).toContain('2000');
    // The URL parser would resolve these to /b/c.json: the segment rule is not to be bypassed.
    for (const url of [
      'https://app.example/a\\..\\b/c.json',
      'https://app.example/a/.\t./b/c.json',
      'https://app.example/a/..\n/b/c.json',
      'https://app.example/a b.json',
      'https://exämple.example/c.json',
    ])
      expect(clientIdUrlProblem(url)).toContain('characters a URL may not hold');
    expect(clientIdUrlProblem('https://xn--exmple-cua.example/c.json')).toBeUndefined();
    expect(clientIdUrlProblem('HTTPS://app.example/c.json')).toContain('in lower case');
    expect(clientIdUrlProblem('Https://app.example/c.json')).toContain('in lower case');
  });
});

describe('the document', () => {
  const url = 'https://app.example/client.json';
  const valid = { client_id: url, client_name: ' Agent ', redirect_uris: ['http://127.0.0.1:3000/cb'] };
  const parse = (document: unknown) => parseMetadataDocument(url, JSON.stringify(document), NOW);

  it('needs only client_id, client_name and redirect_uris; the auth method defaults to none', () => {
    expect(parse(valid)).toEqual({
      ok: true,
      client: {
        id: url,
        name: 'Agent',
        redirectUris: ['http://127.0.0.1:3000/cb'],
        clientUri: null,
        logoUri: null,
        fetchedAt: NOW,
      },
    });
  });

  it('compares client_id as an exact string', () => {
    expect(parse({ ...valid, client_id: 'https://app.example:443/client.json' })).toMatchObject({
      ok: false,
    });
    expect(parse({ ...valid, client_id: 'https://APP.example/client.json' })).toMatchObject({ ok: false });
  });

  it('refuses missing fields, hidden characters in the name and unusable redirect URIs', () => {
    expect(parse({ ...valid, client_name: undefined })).toMatchObject({ ok: false });
    expect(parse({ ...valid, client_name: 'Agent\u202E' })).toMatchObject({ ok: false });
    expect(parse({ ...valid, redirect_uris: [] })).toMatchObject({ ok: false });
    expect(parse({ ...valid, redirect_uris: ['http://evil.example/cb'] })).toMatchObject({ ok: false });
    expect(parse({ ...valid, redirect_uris: ['https://app.example/cb\u0000'] })).toMatchObject({ ok: false });
    expect(parse({ ...valid, redirect_uris: ['https://app.example/c\u007fb'] })).toMatchObject({ ok: false });
    expect(parse({ ...valid, grant_types: ['client_credentials'] })).toMatchObject({ ok: false });
    expect(parse({ ...valid, response_types: ['token'] })).toMatchObject({ ok: false });
    expect(parse([valid])).toMatchObject({ ok: false });
  });

  it('drops a client_uri or logo_uri with a control character instead of storing it', () => {
    expect(
      parse({ ...valid, client_uri: 'https://app.example/\u0000', logo_uri: 'https://app.example/\n.png' }),
    ).toMatchObject({ ok: true, client: { clientUri: null, logoUri: null } });
  });

  it('refuses every shared-secret method', () => {
    for (const method of ['client_secret_basic', 'client_secret_post', 'client_secret_jwt'])
      expect(parse({ ...valid, token_endpoint_auth_method: method })).toMatchObject({
        ok: false,
        message: expect.stringContaining('needs a shared secret'),
      });
    expect(parse({ ...valid, client_secret_expires_at: 0 })).toMatchObject({ ok: false });
  });
});

describe('how long a document is kept', () => {
  const seconds = (headers: Record<string, string>) => cacheLifetimeSeconds(headers, NOW);

  it('follows max-age (less Age), else Expires, else 5 minutes', () => {
    expect(seconds({ 'cache-control': 'public, max-age=600' })).toBe(600);
    expect(seconds({ 'cache-control': 'max-age=600', age: '100' })).toBe(500);
    expect(seconds({ expires: 'Sun, 29 Nov 2026 01:00:00 GMT', date: 'Sun, 29 Nov 2026 00:00:00 GMT' })).toBe(
      3600,
    );
    expect(seconds({})).toBe(300);
  });

  it('within 60 seconds and 24 hours', () => {
    expect(seconds({ 'cache-control': 'no-store' })).toBe(60);
    expect(seconds({ 'cache-control': 'no-cache, max-age=600' })).toBe(60);
    expect(seconds({ 'cache-control': 'max-age=5' })).toBe(60);
    expect(seconds({ 'cache-control': 'max-age=31536000' })).toBe(86_400);
    expect(seconds({ expires: 'garbage' })).toBe(60);
  });
});

describe('name lookups that stall', () => {
  it('keep their fetch slot after the fetch has given up on them, until they end', async () => {
    // dns.lookup cannot be cancelled: a lookup of a name whose DNS server never answers runs on
    // (on libuv's threadpool) after the 100 ms the fetch waited. Stands in for such a server.
    const started: string[] = [];
    let fail!: (error: Error) => void;
    const stalled = new Promise<never>((_, reject) => {
      fail = reject;
    });
    stalled.catch(() => undefined);
    const resolver = createClientMetadataResolver({
      resolve: (hostname) => {
        started.push(hostname);
        return stalled;
      },
      timeoutMs: 100,
      maxConcurrentFetches: 2,
      now: () => NOW,
    });
    for (const host of ['a', 'b'])
      expect(await resolver.resolve(`https://${host}.stalled.example/c.json`)).toMatchObject({
        ok: false,
        message: expect.stringContaining('could not be resolved'),
      });
    // Both fetches are over; their lookups are not, so a third one does not start.
    expect(await resolver.resolve('https://c.stalled.example/c.json')).toEqual({
      ok: false,
      message: 'earshot is fetching too many client metadata documents at once; try again in a moment.',
      busy: true,
    });
    expect(started).toEqual(['a.stalled.example', 'b.stalled.example']);
    fail(new Error('SERVFAIL'));
    await new Promise((resolve) => setImmediate(resolve));
    await resolver.resolve('https://d.stalled.example/c.json');
    expect(started).toContain('d.stalled.example');
  });
});

describe('the resolver against a real https server', () => {
  let docs: DocumentServer;
  beforeAll(async () => {
    docs = await startDocumentServer();
  });
  afterAll(() => docs?.close());
  const resolver = (maxConcurrentFetches?: number) =>
    createClientMetadataResolver({
      allow: parseAllowCidrs(['127.0.0.1/32']),
      ca: docs.tls.ca,
      timeoutMs: 1_000,
      ...(maxConcurrentFetches !== undefined && { maxConcurrentFetches }),
      now: () => new Date(),
    });
  const document = { client_name: 'Agent', redirect_uris: ['http://127.0.0.1:3000/cb'] };

  it('tells an anonymous requester neither what a host name resolves to nor whether it resolves', async () => {
    const strict = createClientMetadataResolver({ ca: docs.tls.ca, timeoutMs: 1_000, now: () => new Date() });
    // The system resolver: localhost is 127.0.0.1, a .invalid name resolves to nothing (RFC 6761).
    const internal = await strict.resolve('https://localhost/client.json');
    const missing = await strict.resolve('https://earshot-cimd.invalid/client.json');
    const said = (host: string) =>
      `The client_id URL host ${host} could not be resolved to public addresses; earshot fetches client metadata documents from public addresses only.`;
    expect(internal).toEqual({ ok: false, message: said('localhost') });
    expect(missing).toEqual({ ok: false, message: said('earshot-cimd.invalid') });
    // An address literal is the requester's own: its reason is given.
    expect(await strict.resolve('https://10.1.2.3/client.json')).toMatchObject({
      ok: false,
      message: expect.stringContaining('private address, 10.0.0.0/8'),
    });
  });

  it('shares one fetch between concurrent requests for one URL', async () => {
    const url = docs.serve('/shared.json', document);
    const resolve = resolver();
    const [a, b] = await Promise.all([resolve.resolve(url), resolve.resolve(url)]);
    expect(a).toMatchObject({ ok: true, fetched: true });
    expect(b).toBe(a);
    expect(docs.hits('/shared.json')).toBe(1);
    expect(await resolve.resolve(url)).toMatchObject({ ok: true, fetched: false });
    expect(docs.hits('/shared.json')).toBe(1);
  });

  it("quotes at most 80 characters of a wrong content type: the server's text on earshot's page", async () => {
    const pitch = `text/html; ${'Your earshot account is suspended: call +1 555 0100 to restore it. '.repeat(50)}`;
    const url = docs.handle('/pitch.json', (res) => res.writeHead(200, { 'content-type': pitch }).end('{}'));
    const result = await resolver().resolve(url);
    expect(result).toEqual({
      ok: false,
      message: `The client metadata document was served as ${JSON.stringify(pitch.slice(0, 80))}; it must be application/json.`,
    });
  });

  it('refuses a fetch beyond the concurrency bound instead of queueing it', async () => {
    const slow = docs.handle('/stalled.json', () => undefined);
    const other = docs.serve('/other.json', document);
    const resolve = resolver(1);
    const stalled = resolve.resolve(slow);
    expect(await resolve.resolve(other)).toEqual({
      ok: false,
      message: 'earshot is fetching too many client metadata documents at once; try again in a moment.',
      busy: true,
    });
    expect(await stalled).toMatchObject({ ok: false, message: expect.stringContaining('within 1000 ms') });
    expect(await resolve.resolve(other)).toMatchObject({ ok: true });
  });
});
