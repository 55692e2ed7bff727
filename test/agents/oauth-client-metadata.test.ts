import { describe, expect, it } from 'vitest';
import {
  cacheLifetimeSeconds,
  clientIdUrlProblem,
  parseMetadataDocument,
} from '../../src/agents/oauth/client-metadata.ts';

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
    expect(parse({ ...valid, grant_types: ['client_credentials'] })).toMatchObject({ ok: false });
    expect(parse({ ...valid, response_types: ['token'] })).toMatchObject({ ok: false });
    expect(parse([valid])).toMatchObject({ ok: false });
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
