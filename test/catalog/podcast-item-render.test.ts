// Podcast items rendered once per version and joined to what is computed per request
// (src/catalog/podcast-items.ts, docs/catalog.md "Items rendered once") are byte for byte what the
// routes serialized before: toPodcast's objects written by the routes' response schemas. Both are
// computed in one route of a fastify app over the same database, on varied shows (briefly tracked,
// dormant, without a profile, odd strings, own `__proto__` keys), at several instants, before and
// after shows change, on both engines and in two session time zones.
import Fastify, { type FastifyReply } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  listPodcastItems,
  type PodcastFilters,
  type PodcastItemRow,
  podcastItemRows,
} from '../../projections/podcasts/queries.ts';
import { objectOf, PodcastItems, withMembers } from '../../src/catalog/podcast-items.ts';
import { podcastSchema } from '../../src/catalog/schemas.ts';
import { toPodcast } from '../../src/catalog/views.ts';
import { pageOf } from '../../src/http/pagination.ts';
import { ENGINES } from '../support/db.ts';
import { type CatalogHarness, catalogHarness, episodeOf, NOW, podcastEvent } from './support.ts';

const DAY = 86_400_000;
const daysAgo = (days: number) => new Date(NOW.getTime() - days * DAY).toISOString();
const EXTRAS = {
  related: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' } } } },
  note: { type: 'string' },
};
const EXTRAS_SCHEMA = objectOf(EXTRAS);

function shows() {
  const odd = 'Ça «marche» — 日本語 🎙️ "quoted" \\ back\nline\u2028sep\ttab \u007f';
  return [
    podcastEvent({
      id: 'odd-1',
      title: odd,
      slug: 'odd-1',
      description: `${odd} ${'long '.repeat(40)}`,
      url: 'https://example.com/?a=1&b=<2>',
      language: 'ja-JP',
      explicit: true,
      popularity: 0.123456789,
      bias: 'LEFT',
      political_context: 'élection',
      suitability_tier: 'SAFE',
      feed_url: 'https://example.com/feed',
      directory_ids: JSON.parse('{"__proto__":"proto-id","apple":"123","ключ":"значение"}'),
      publisher: { id: 'pub-1', name: '出版社 "P"', slug: 'pub' },
      topics: [
        { id: '__proto__', name: 'Proto 🧪', slug: 'proto', ancestry: 'science/proto' },
        { id: 'topic-x', name: 'X\u0001Y', ancestry: 'science/x' },
      ],
    }),
    podcastEvent({ id: 'bare-1', title: 'No episodes yet' }),
    podcastEvent({ id: 'video-1', title: 'Declared video', has_video: true, popularity: 0 }),
    podcastEvent({ id: 'pub-empty', title: 'Empty publisher', publisher: {}, directory_ids: {} }),
    // briefly tracked: first episode a week ago
    ...[1, 3, 7].map((d, n) =>
      episodeOf({
        id: `young-e${n}`,
        podcastId: 'young-1',
        podcastTitle: 'Young show',
        publishedAt: daysAgo(d),
        roles: n === 0 ? ['HOST', 'GUEST'] : ['HOST'],
      }),
    ),
    // dormant: last episode 120 days ago, enough analyzed episodes for guest frequency and signals
    ...[120, 130, 140, 150, 160, 170].map((d, n) =>
      episodeOf({
        id: `old-e${n}`,
        podcastId: 'old-1',
        podcastTitle: 'Old show',
        publishedAt: daysAgo(d),
        durationSeconds: 1234 + n,
        roles: ['HOST', 'GUEST', 'CALLER'],
        ads: n % 2,
        videos: n === 0 ? 1 : 0,
        topics: [{ id: 'topic-x', name: 'X\u0001Y', ancestry: 'science/x' }],
      }),
    ),
    // active for long: episodes over the last year, some in the window
    ...Array.from({ length: 9 }, (_, n) =>
      episodeOf({
        id: `steady-e${n}`,
        podcastId: 'steady-1',
        podcastTitle: 'Steady café',
        publishedAt: daysAgo(5 + n * 40),
        durationSeconds: n === 0 ? 0 : 600 * n + 7,
        roles: n % 3 === 0 ? ['HOST'] : ['HOST', 'PANELIST', 'PANELIST'],
        topics: [
          { id: 'topic-food', name: 'Food', slug: 'food', ancestry: 'culture/food' },
          { id: `topic-${n % 4}`, name: `Topic ${n % 4}`, ancestry: `culture/t${n % 4}` },
        ],
      }),
    ),
    episodeOf({
      id: 'odd-e1',
      podcastId: 'odd-1',
      podcastTitle: odd,
      publishedAt: daysAgo(89.9),
      roles: ['HOST'],
    }),
  ];
}

const FILTERS: Omit<PodcastFilters, 'now'>[] = [
  { sort: 'relevance' },
  { sort: 'popularity' },
  { sort: 'relevance', q: 'show' },
  { sort: 'relevance', q: 'steady cafe' },
  { sort: 'relevance', topicId: 'culture' },
  { sort: 'relevance', topicId: 'science' },
  { sort: 'relevance', publishingStatus: 'dormant' },
  { sort: 'popularity', hasVideo: true },
];

/** The item routes answered the old way: toPodcast's objects, serialized by the response schema. */
const oldItem = (row: PodcastItemRow, now: Date) =>
  toPodcast(row.podcast, {
    ...(row.format ? { format: row.format } : {}),
    topics: row.topics,
    ...(row.matchQuality ? { matchQuality: row.matchQuality } : {}),
    now,
  });

describe.each(ENGINES.flatMap((engine) => ['UTC', 'Pacific/Chatham'].map((zone) => [engine, zone])))(
  'podcast items rendered once on %s in %s',
  (engine, zone) => {
    let h: CatalogHarness;
    const app = Fastify();
    const items = new PodcastItems(2 ** 20);
    let job: (reply: FastifyReply) => Promise<{ old: string; now: string[] }>;
    const run = async (next: typeof job) => {
      job = next;
      const r = await app.inject({ url: '/compare' });
      expect(r.statusCode).toBe(200);
      return r.json() as { old: string; now: string[] };
    };

    beforeAll(async () => {
      h = await catalogHarness(engine as 'postgres', () => NOW, zone);
      await h.ingest(shows());
      app.get('/compare', { schema: { response: { 200: pageOf(podcastSchema) } } }, async (_request, reply) =>
        reply.type('application/json').send(JSON.stringify(await job(reply))),
      );
      app.get(
        '/compare-one',
        {
          schema: {
            response: {
              200: { ...podcastSchema, properties: { ...podcastSchema.properties, ...EXTRAS } },
            },
          },
        },
        async (_request, reply) => reply.type('application/json').send(JSON.stringify(await job(reply))),
      );
      await app.ready();
    }, 120_000);
    afterAll(async () => {
      await app.close();
      await h.close();
    });

    let seen = '';
    const comparePages = async (now: Date) => {
      let compared = 0;
      for (const base of FILTERS)
        for (const [limit, offset] of [
          [25, 0],
          [2, 0],
          [2, 2],
          [1, 5],
        ] as const) {
          const filters = { ...base, now };
          const { old, now: rendered } = await run(async (reply) => {
            const rows = await listPodcastItems(h.db, filters, limit + 1, offset);
            const more = rows.length > limit;
            const data = rows.slice(0, limit).map((row) => oldItem(row, now));
            const old = reply.serialize(
              more ? { data, has_more: true, cursor: 'next' } : { data, has_more: false },
            ) as string;
            // the first rendering of new versions, then again from what is kept
            const first = await items.page(h.db, reply, filters, limit, offset, () => 'next');
            const kept = await items.page(h.db, reply, filters, limit, offset, () => 'next');
            return { old, now: [first, kept] };
          });
          expect(rendered).toEqual([old, old]);
          compared += (JSON.parse(old) as { data: unknown[] }).data.length;
          seen += old;
        }
      return compared;
    };

    const compareOnes = async (now: Date) => {
      const ids = (await h.db.query<{ id: string }>('select id from podcasts order by id')).rows.map(
        (r) => r.id,
      );
      for (const id of ids)
        for (const topicLimit of [0, 1, 10, 100])
          for (const extras of [undefined, { related: [{ id: 'r1' }], note: 'é' }, {}]) {
            job = async (reply) => {
              const [row] = await podcastItemRows(h.db, [id], now, topicLimit);
              const old = reply.serialize({ ...oldItem(row as PodcastItemRow, now), ...extras }) as string;
              const one = async () => {
                const item = (await items.one(h.db, reply, id, now, topicLimit)) as string;
                return extras ? withMembers(reply, item, EXTRAS_SCHEMA, extras) : item;
              };
              return { old, now: [await one(), await one()] };
            };
            const r = await app.inject({ url: '/compare-one' });
            const { old, now: rendered } = r.json() as { old: string; now: string[] };
            expect(rendered).toEqual([old, old]);
          }
      return ids.length;
    };

    it('renders every page and item as the response schema wrote toPodcast, at several instants', {
      timeout: 120_000,
    }, async () => {
      // now; 30 days on (the young show no longer briefly tracked, odd-1 dormant); a year on (all dormant)
      for (const now of [NOW, new Date(NOW.getTime() + 30 * DAY), new Date(NOW.getTime() + 365 * DAY)]) {
        expect(await comparePages(now)).toBeGreaterThan(40);
        expect(await compareOnes(now)).toBe(7);
      }
      // the pages held what the cases are for
      for (const part of [
        '"__proto__":"proto-id"',
        '"id":"__proto__"',
        '"match_quality":"',
        '"episodes_per_week":',
        '"publishing_status":"active"',
        '"publishing_status":"dormant"',
        '"signals":["',
        '"has_ads":false',
        '"cursor":"next"',
        '"title":"Ça «marche» — 日本語 🎙️ \\"quoted\\" \\\\ back\\nline',
      ])
        expect(seen).toContain(part);
    });

    it('renders a show again when it changes (its list row is written again)', {
      timeout: 120_000,
    }, async () => {
      await comparePages(NOW);
      await h.ingest([
        podcastEvent(
          { id: 'steady-1', title: 'Steady café — renamed ✓', popularity: 0.9 },
          '2026-11-20T11:00:00Z',
        ),
        episodeOf({
          id: 'young-e9',
          podcastId: 'young-1',
          podcastTitle: 'Young show',
          publishedAt: daysAgo(0.5),
          roles: ['HOST', 'GUEST'],
          topics: [{ id: 'topic-new', name: 'New', ancestry: 'science/new' }],
        }),
      ]);
      await comparePages(NOW);
      await compareOnes(NOW);
      // a show written again between the page's statement and the read of its item: the page is
      // read again whole, as one snapshot saw it
      const fresh = new PodcastItems(2 ** 20);
      let wrote = false;
      const writing = {
        query: async (sql: string, values?: unknown[]) => {
          if (!wrote && sql.includes('where p.id = any($1::text[])')) {
            wrote = true;
            await h.db.query(`update podcasts set title = title || ' (again)' where id = 'young-1'`);
          }
          return h.db.query(sql, values);
        },
      } as typeof h.db;
      const filters = { sort: 'relevance', q: 'show', now: NOW } as const;
      const again = await run(async (reply) => {
        const now = [await fresh.page(writing, reply, filters, 25, 0, () => 'next')];
        const rows = await listPodcastItems(h.db, filters, 26, 0);
        const data = rows.slice(0, 25).map((row) => oldItem(row, NOW));
        const page = rows.length > 25 ? { data, has_more: true, cursor: 'next' } : { data, has_more: false };
        return { old: reply.serialize(page) as string, now };
      });
      expect(wrote).toBe(true);
      expect(again.now[0]).toContain('(again)');
      expect(again.now).toEqual([again.old]);
      const page = await run(async (reply) => ({
        old: '',
        now: [await items.page(h.db, reply, { sort: 'popularity', now: NOW }, 25, 0, () => 'next')],
      }));
      expect(page.now[0]).toContain('Steady café — renamed ✓');
      expect(page.now[0]).toContain('"name":"New"');
      // the harness's own route (its response cache and item cache) agrees
      const r = await h.get('/v1/podcasts', { sort: 'popularity', limit: '25' });
      expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(r.body).toBe(page.now[0]);
    });
  },
);
