import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { backfill } from '../../consumers/matcher/backfill.ts';
import { TOOL_TABLE } from '../../src/agents/tool-table.ts';
import { allProjections, buildCapabilities } from '../../src/composition.ts';
import { loadConfig } from '../../src/config.ts';
import type { IngestEvent } from '../../src/ingestion/events.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { verifyEmail } from '../../src/platform/organizations.ts';
import { type AdSpec, episodeWith } from '../advertising/support.ts';
import { alertBody } from '../alerts/support.ts';
import { entityEvent, episodeEvent } from '../fixtures/events.ts';
import { rankingEvent } from '../fixtures/rankings.ts';
import { runUntilCaughtUp } from '../matching/support.ts';
import { epFox, epNear, epSg } from '../search/fixture.ts';
import { createTenant } from '../support/platform.ts';
import { catchUp } from '../support/projections.ts';
import { type AgentsHarness, agentsHarness, ROOT_KEY } from './support.ts';

/**
 * Every tool of the tool table, in every mode, called through the SDK's own Client over Streamable
 * HTTP with arguments that find data, against the REST route it performs called over HTTP with the
 * same key: the tool answers what its route answers (docs/agents.md).
 */

let h: AgentsHarness;
let tenant: Awaited<ReturnType<typeof createTenant>>;
let alertId: string;
let previewId: string;
let client: Client;

const DAY = 86_400_000;
/** An instant `days` before the real clock: the alert preview and backfill look back from now. */
const daysAgo = (days: number) => new Date(Date.now() - days * DAY).toISOString();

const JENSEN = { entity_type: 'PERSON', entity_id: 'ent-jensen' } as const;

const entities = [
  entityEvent({
    id: 'ent-jensen',
    name: 'Jensen Huang',
    slug: 'jensen-huang',
    person: { company: 'Nvidia', title: 'CEO' },
  }),
  entityEvent({
    id: 'ent-nvidia',
    name: 'Nvidia',
    slug: 'nvidia',
    entity_type: 'COMPANY',
    company: { domain: 'nvidia.com', ticker: 'NVDA' },
  }),
  entityEvent({ id: 'ent-sg', name: 'Société Générale', slug: 'societe-generale', entity_type: 'COMPANY' }),
  entityEvent({ id: 'g3', name: 'Gina Three', slug: 'gina-three' }),
  entityEvent({
    id: 'c-two',
    name: 'Two Corp',
    slug: 'two-corp',
    entity_type: 'COMPANY',
    company: { domain: 'two.example' },
  }),
  entityEvent({ id: 'maria', name: 'Maria Marketer', person: { company: 'Two Corp', title: 'CMO' } }),
];

/** A graph of shows (test/advertising/related.test.ts): P's related shows share guests, sponsors, topics. */
const at = '2026-11-10T06:00:00Z';
const TWO: AdSpec = {
  sponsor: 's2',
  name: 'Two',
  company: 'c-two',
  read: 'HOST_READ',
  placement: 'MID_ROLL',
};
const advertising = [
  episodeWith({
    id: 'P1',
    podcast: 'P',
    publisher: 'pub1',
    publishedAt: at,
    guests: ['g1'],
    topics: ['t1', 't2'],
    ads: [{ sponsor: 's1', read: 'PRE_RECORDED', placement: 'PRE_ROLL' }],
  }),
  episodeWith({
    id: 'P2',
    podcast: 'P',
    publisher: 'pub1',
    publishedAt: '2026-11-11T06:00:00Z',
    guests: ['g2'],
  }),
  episodeWith({
    id: 'Q1',
    podcast: 'Q',
    publisher: 'pub1',
    publishedAt: at,
    guests: ['g1', 'g2', 'g3'],
    topics: ['t1', 't2'],
    ads: [{ sponsor: 's1' }, TWO, { sponsor: 's3', promo: true }],
  }),
  episodeWith({
    id: 'Q2',
    podcast: 'Q',
    publisher: 'pub1',
    publishedAt: '2026-10-20T06:00:00Z',
    guests: ['g1'],
    ads: [TWO],
  }),
  episodeWith({ id: 'R1', podcast: 'R', publishedAt: at, guests: ['g1'], topics: ['t1'] }),
  episodeWith({ id: 'T1', podcast: 'T', publishedAt: at, ads: [{ sponsor: 's1' }, { sponsor: 's9' }] }),
];

/** Apple US top podcasts on three days, and its technology chart once. */
const rankings = [
  rankingEvent({}, '2026-11-01T06:00:00Z', [
    { rank: 1, podcast_id: 'pod-a' },
    { rank: 2, podcast_id: 'P' },
    { rank: 3, podcast_id: 'Q' },
  ]),
  rankingEvent({}, '2026-11-10T06:00:00Z', [
    { rank: 1, podcast_id: 'P' },
    { rank: 2, podcast_id: 'pod-a' },
    { rank: 3, podcast_id: 'R' },
  ]),
  rankingEvent({}, '2026-11-18T06:00:00Z', [
    { rank: 1, podcast_id: 'Q' },
    { rank: 2, podcast_id: 'pod-a' },
    { rank: 3, podcast_id: 'P' },
  ]),
  rankingEvent(
    { category: { slug: 'technology', name: 'Technology', external_id: '1318', parent_slug: null } },
    '2026-11-18T06:00:00Z',
    [{ rank: 4, podcast_id: 'pod-a' }],
  ),
];

/** Jensen on Chip Talk yesterday: what the preview counts and the alert's backfill matches. */
const recent = episodeEvent({
  id: 'ep-recent',
  publishedAt: daysAgo(1),
  podcast: { id: 'pod-a', title: 'Chip Talk', slug: 'chip-talk', language: 'en', popularity: 0.96 },
  lines: ['Welcome back.', 'Jensen Huang joins us today.', 'Thanks, Jensen Huang.'],
  mentions: [{ entity_id: 'ent-jensen', lines: [2, 3], variants: ['Jensen Huang'], relevance: 'on_target' }],
});

const EVENTS: IngestEvent[] = [...entities, epFox, epSg, epNear, recent, ...advertising, ...rankings];

beforeAll(async () => {
  h = await agentsHarness();
  const runtime = {
    config: loadConfig({ PUBLIC_BASE_URL: h.url, DATA_DIR: '/tmp/earshot-agents-test' }),
    db: h.db,
    store: h.store,
    secretKey: ROOT_KEY,
    log: pino({ level: 'silent' }),
    now: () => new Date(),
  };
  // Every read model of the app, so a surface that lands later reads its data too.
  const projections = allProjections(buildCapabilities(runtime));
  const project = async () => {
    for (const projection of projections) await catchUp(h.db, h.store, projection);
  };
  tenant = await createTenant(h.db, 'ENTERPRISE');
  await verifyEmail(h.db, tenant.organization.id, 'ops@example.com');
  await ingestEvents(h.store, EVENTS);
  await project();

  const created = await rest('POST', `/v1/projects/${tenant.project.id}/alerts`, alertBody());
  expect(created.status, created.text).toBe(200);
  alertId = created.json.id as string;
  await project();
  await runUntilCaughtUp(h.db, h.store, backfill({ ...runtime, pollMs: 20 }));
  await project();

  // A preview's id is that of its entity, kind and window: started here and finished, the tool's
  // start and the route's both answer it, completed.
  const started = await rest('POST', `/v1/projects/${tenant.project.id}/alerts/preview?window_days=7`, {
    entities: [JENSEN],
  });
  expect(started.status, started.text).toBeLessThan(300);
  previewId = started.json.preview_id as string;
  await vi.waitFor(
    async () => {
      const polled = await rest('GET', `/v1/alerts/preview/${previewId}`);
      expect(polled.json.status).toBe('completed');
    },
    { timeout: 20_000, interval: 100 },
  );

  client = new Client({ name: 'earshot-every-tool', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(h.mcpUrl), { requestInit: { headers: tenant.headers } }),
  );
}, 120_000);
afterAll(async () => {
  await client?.close();
  await h?.close();
});

/** The REST route over HTTP with the tenant's key: status, body text and its JSON. */
async function rest(method: 'GET' | 'POST', url: string, body?: object) {
  const response = await fetch(`${h.url}${url}`, {
    method,
    headers: {
      ...tenant.headers,
      accept: 'application/json',
      ...(body && { 'content-type': 'application/json' }),
    },
    ...(body && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text) as Record<string, unknown> };
}

interface Call {
  args: Record<string, unknown>;
  /** The same request made to the route by hand. */
  rest: { method: 'GET' | 'POST'; url: string; body?: object };
  /** Creates something: compared with the route's answer to the same request but for what it creates. */
  write?: boolean;
  /** Why the route answers an empty list here; without it, a list must hold something. */
  empty?: string;
  /** What makes an answer that is not a list meaningful. */
  holds?: (body: Record<string, unknown>) => void;
}

const get = (url: string) => ({ method: 'GET', url }) as const;

/** One call per tool, one per mode of a tool with modes. */
const calls = (): Record<string, Call | Record<string, Call>> => {
  const project = tenant.project.id;
  return {
    earshot_entity_resolve: { args: { q: 'Jensen' }, rest: get('/v1/entities/search?q=Jensen') },
    earshot_person_resolve: { args: { q: 'Jensen' }, rest: get('/v1/people?q=Jensen') },
    earshot_company_resolve: { args: { ticker: 'NVDA' }, rest: get('/v1/companies?ticker=NVDA') },
    earshot_podcast_resolve: { args: { q: 'chip talk' }, rest: get('/v1/podcasts/search?q=chip%20talk') },
    earshot_podcast_get: {
      args: { id: 'chip-talk' },
      rest: get('/v1/podcasts/chip-talk'),
      holds: (body) => expect(body).toMatchObject({ id: 'pod-a', title: 'Chip Talk' }),
    },
    earshot_podcast_list_episodes: {
      args: { id: 'pod-a', limit: 2 },
      rest: get('/v1/podcasts/pod-a/episodes?limit=2'),
    },
    earshot_episode_get: {
      args: { id: 'ep-fox', include: 'transcript,segments,clips,speakers' },
      rest: get('/v1/podcasts/episodes/ep-fox?include=transcript,segments,clips,speakers'),
      holds: (body) => expect(body).toMatchObject({ id: 'ep-fox', clips: expect.any(Array) }),
    },
    earshot_search_transcripts: {
      args: { keyword_search: 'chips', sort: 'recency' },
      rest: get('/v1/podcasts/episodes/search?keyword_search=chips&sort=recency'),
    },
    earshot_find_mentions: {
      args: { entity_id: 'ent-nvidia', context_lines: 1 },
      rest: get('/v1/podcasts/mentions?entity_id=ent-nvidia&context_lines=1'),
    },
    earshot_list_clips: { args: { podcast_id: 'pod-a' }, rest: get('/v1/podcasts/clips?podcast_id=pod-a') },
    earshot_get_rankings: {
      chart: {
        args: { mode: 'chart', source: 'apple', country: 'us' },
        rest: get('/v1/podcasts/rankings?source=apple&country=us'),
      },
      movers: {
        args: { mode: 'movers', source: 'apple', country: 'us', window_days: 7 },
        rest: get('/v1/podcasts/rankings/movers?source=apple&country=us&window_days=7'),
      },
      history: {
        args: { mode: 'history', id: 'pod-a', source: 'apple' },
        rest: get('/v1/podcasts/pod-a/rankings/history?source=apple'),
      },
    },
    earshot_podcast_related: { args: { id: 'P' }, rest: get('/v1/podcasts/P/related') },
    earshot_episode_related: { args: { id: 'P1' }, rest: get('/v1/podcasts/episodes/P1/related') },
    earshot_podcast_recommendations: {
      sponsors: {
        args: { mode: 'sponsors', id: 'P' },
        rest: get('/v1/podcasts/P/recommendations/sponsors'),
      },
      guests: { args: { mode: 'guests', id: 'P' }, rest: get('/v1/podcasts/P/recommendations/guests') },
      podcasts: {
        args: { mode: 'podcasts', id: 'gina-three' },
        rest: get('/v1/podcasts/guests/gina-three/recommendations/podcasts'),
      },
    },
    earshot_ad_leaderboard: {
      args: { metric: 'podcast_reach', limit: 3 },
      rest: get('/v1/podcasts/advertising/leaderboard?metric=podcast_reach&limit=3'),
    },
    earshot_ad_timeseries: {
      args: { company_id: 'two-corp', since: '2026-10-01', until: '2026-11-20', interval: 'week' },
      rest: get(
        '/v1/podcasts/advertising/timeseries?company_id=two-corp&since=2026-10-01&until=2026-11-20&interval=week',
      ),
      holds: (body) => expect(body).toMatchObject({ company_id: 'c-two', total_ads: 2 }),
    },
    earshot_company_ad_presence: {
      args: { id: 'two-corp' },
      rest: get('/v1/companies/two-corp/podcast/advertising'),
      holds: (body) => expect(body).toMatchObject({ company_id: 'c-two', total_ads: 2, podcast_reach: 1 }),
    },
    earshot_podcast_sponsors: {
      args: { id: 'Q' },
      rest: get('/v1/podcasts/Q/advertising'),
      holds: (body) => expect(body).toMatchObject({ podcast_id: 'Q', total_ads: 3 }),
    },
    earshot_alert_create: {
      args: alertBody({ title: 'Jensen, again' }),
      rest: {
        method: 'POST',
        url: `/v1/projects/${project}/alerts`,
        body: alertBody({ title: 'Jensen, again' }),
      },
      write: true,
      holds: (body) => expect(body).toMatchObject({ title: 'Jensen, again', project_id: project }),
    },
    earshot_alert_list: { args: { limit: 10 }, rest: get(`/v1/projects/${project}/alerts?limit=10`) },
    earshot_alert_preview: {
      start: {
        args: { mode: 'start', entities: [JENSEN], window_days: 7 },
        rest: {
          method: 'POST',
          url: `/v1/projects/${project}/alerts/preview?window_days=7`,
          body: { entities: [JENSEN] },
        },
        holds: (body) => expect(body).toEqual({ preview_id: previewId, status: 'completed', window_days: 7 }),
      },
      result: {
        args: { mode: 'result', preview_id: previewId },
        rest: get(`/v1/alerts/preview/${previewId}`),
        holds: (body) => expect(body).toMatchObject({ status: 'completed', total_matches: 1 }),
      },
    },
    earshot_alert_list_matches: {
      args: { id: alertId, limit: 5 },
      rest: get(`/v1/alerts/${alertId}/matches?limit=5`),
    },
    earshot_alert_list_deliveries: {
      args: { id: alertId },
      rest: get(`/v1/alerts/${alertId}/deliveries`),
      empty: 'the backfill matches but never notifies, and no episode arrives after the alert',
    },
  };
};

/** Every tool and every mode of the tool table: a tool or mode added without a call here fails. */
const TOOL_MODES = TOOL_TABLE.flatMap((spec): { name: string; mode?: string; label: string }[] =>
  'method' in spec.route
    ? [{ name: spec.name, label: spec.name }]
    : Object.keys(spec.route).map((mode) => ({ name: spec.name, mode, label: `${spec.name} mode ${mode}` })),
);

const callOf = (name: string, mode: string | undefined) => {
  const entry = calls()[name];
  return (mode === undefined ? entry : (entry as Record<string, Call> | undefined)?.[mode]) as
    | Call
    | undefined;
};

/** What two identical writes differ in: what each creates. */
const created = (body: unknown) =>
  JSON.parse(
    JSON.stringify(body, (key, value) =>
      ['id', 'created_at', 'updated_at'].includes(key) && typeof value === 'string' ? '*' : value,
    ),
  );

describe('every MCP tool through the SDK client', () => {
  it('serves every tool of the tool table, and this file calls each in every mode', async () => {
    const served = (await client.listTools()).tools.map((tool) => tool.name);
    expect(served.filter((name) => name !== 'earshot_catalog' && name !== 'earshot_call').sort()).toEqual(
      TOOL_TABLE.map((spec) => spec.name).sort(),
    );
    const table = calls();
    expect(Object.keys(table).sort()).toEqual(TOOL_TABLE.map((spec) => spec.name).sort());
    for (const spec of TOOL_TABLE) {
      const entry = table[spec.name] ?? {};
      if ('method' in spec.route) expect(entry, spec.name).toHaveProperty('args');
      else expect(Object.keys(entry).sort(), spec.name).toEqual(Object.keys(spec.route).sort());
    }
  });

  it.each(TOOL_MODES)('$label answers what its route answers', async ({ name, mode, label }) => {
    const call = callOf(name, mode);
    expect(call?.args, `no call for ${label}`).toBeDefined();
    const { args, rest: request, write, empty, holds } = call as Call;
    const result = await client.callTool({ name, arguments: args });
    const answered = await rest(request.method, request.url, request.body);
    expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
    expect(answered.status, answered.text).toBeLessThan(300);
    const structured = result.structuredContent as Record<string, unknown>;
    expect(result.content).toEqual([{ type: 'text', text: expect.any(String) }]);
    const text = (result.content as { text: string }[])[0]!.text;
    const json = text.slice(text.indexOf('\n') + 1);
    if (write) {
      expect(created(structured)).toEqual(created(answered.json));
      expect(JSON.parse(json)).toEqual(structured);
    } else {
      expect(structured).toEqual(answered.json);
      expect(json).toBe(answered.text);
    }
    // Two empty answers agree on nothing: each call must find what the ingest put there.
    if (holds) holds(answered.json);
    else if (empty) expect(answered.json.data).toEqual([]);
    else expect((answered.json.data as unknown[]).length, answered.text).toBeGreaterThan(0);
  });
});
