import { describe, expect, it } from 'vitest';
import { atomicAmount, dollars, mcpBillableRequests, routeCents } from '../../src/payments/prices.ts';

describe('what a keyless call pays', () => {
  it('prices the reads of the billable surfaces, the leaderboard at four cents', () => {
    expect(routeCents({ method: 'GET', url: '/v1/podcasts/:id', tags: ['catalog'] })).toBe(1);
    expect(routeCents({ method: 'GET', url: '/v1/entities/search', tags: ['entities'] })).toBe(1);
    expect(
      routeCents({ method: 'GET', url: '/v1/podcasts/advertising/leaderboard', tags: ['advertising'] }),
    ).toBe(4);
  });

  it('never prices writes, public or ingest routes, untagged routes or other surfaces', () => {
    for (const route of [
      { method: 'POST', url: '/v1/podcasts/search', tags: ['search'] },
      { method: ['GET', 'HEAD'], url: '/v1/podcasts', tags: ['catalog'] },
      { method: 'GET', url: '/v1/embed/clips/:id', auth: 'public', tags: ['catalog'] },
      { method: 'GET', url: '/v1/projects/:projectId/alerts', tags: ['alerts'] },
      { method: 'GET', url: '/v1/deliveries/:id', auth: 'optional', tags: ['deliveries'] },
      { method: 'GET', url: '/v1/podcasts/whatever' },
      { method: 'GET', url: '/healthz', auth: 'public', tags: ['health'] },
    ])
      expect(routeCents(route), JSON.stringify(route)).toBeUndefined();
  });

  it('lets initialize, tools/list, ping, notifications and id-less messages through /mcp free', () => {
    expect(mcpBillableRequests({ jsonrpc: '2.0', id: 1, method: 'initialize' })).toEqual([]);
    expect(mcpBillableRequests({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).toEqual([]);
    expect(mcpBillableRequests([{ jsonrpc: '2.0', method: 'notifications/initialized' }])).toEqual([]);
    expect(mcpBillableRequests({ jsonrpc: '2.0', method: 'tools/call' })).toEqual([]);
    expect(mcpBillableRequests('not json-rpc')).toEqual([]);
  });

  it('names the billable requests of an MCP body by their position among its requests', () => {
    expect(mcpBillableRequests({ jsonrpc: '2.0', id: 1, method: 'tools/call' })).toEqual([0]);
    expect(
      mcpBillableRequests([
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 1, method: 'resources/list' },
      ]),
    ).toEqual([1]);
  });

  it('states prices in dollars and in atomic units of the token', () => {
    expect(dollars(4)).toBe('0.04');
    expect(atomicAmount(1, 6)).toBe('10000');
    expect(atomicAmount(4, 18)).toBe('40000000000000000');
  });
});
