import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adFactsProjection } from '../../projections/ad-leaderboard/projection.ts';
import { chartCapturesProjection } from '../../projections/chart_captures/projection.ts';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { entityMentionsProjection } from '../../projections/entity_mentions/projection.ts';
import { episodesProjection } from '../../projections/episodes/projection.ts';
import { podcastLinksProjection } from '../../projections/podcast-links/projection.ts';
import { searchPassagesProjection } from '../../projections/search-passages/projection.ts';
import { refreshLeaderboardSnapshots } from '../../src/advertising/leaderboard.ts';
import { catalogProjections } from '../../src/catalog/capability.ts';
import type { Db } from '../../src/db/db.ts';
import type { EventStore } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import type { IngestEvent } from '../../src/ingestion/events.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { validateEvent } from '../../src/ingestion/validate.ts';
import { catchUpProjection } from '../../src/subscriptions/projection-runner.ts';
import { createTestDb } from '../support/db.ts';

/**
 * n letters of four UTF-8 bytes each (CJK Extension B: letters, so search keys keep them all),
 * varied so that PostgreSQL cannot compress them, ending in `tag` (the same for the same
 * arguments): the most bytes n characters can take.
 */
const wide = (n: number, tag = ''): string => {
  let seed = n + 1;
  let text = '';
  for (let i = tag.length; i < n; i++) {
    seed = (seed * 48_271) % 2_147_483_647;
    text += String.fromCodePoint(0x20000 + (seed % 0xa6e0));
  }
  return text + tag;
};
/** An id at its limit, 400 bytes: four-byte characters, then `tag` padded to 12 ASCII characters. */
const id = (tag: string) => wide(ID - 3) + tag.padEnd(12, '.');
/** A folded form much longer than the text: 'ﷺ' folds to four words. */
const expanding = (n: number) => 'ﷺ'.repeat(n);

const PROJECTIONS = [
  entitiesProjection,
  episodesProjection,
  ...catalogProjections,
  entityMentionsProjection,
  searchPassagesProjection,
  podcastLinksProjection,
  adFactsProjection,
  chartCapturesProjection,
];

/** An id's most four-byte characters: 400 bytes. */
const ID = 100;
/** An entity's name: 1,000 bytes; a sponsor's: 800. */
const NAME = 250;
const SPONSOR = 200;

const OCCURRED = '2026-11-20T10:00:00Z';
const topic = (tag: string) => ({
  id: id(tag),
  name: wide(500),
  slug: wide(300, tag),
  ancestry: wide(300, tag),
});

function widestEvents(): IngestEvent[] {
  const entity = (type: 'PERSON' | 'COMPANY', tag: string) =>
    ({
      type: 'entity.upserted',
      event_id: id(`ev-entity-${tag}`),
      occurred_at: OCCURRED,
      entity: {
        id: id(tag),
        slug: `${'s'.repeat(199)}${tag}`,
        name: wide(NAME - 3) + tag.padEnd(12, '.'),
        entity_type: type,
        aliases: [expanding(500), wide(500)],
        ...(type === 'COMPANY'
          ? { company: { id: id(tag), domain: wide(253), ticker: wide(20), qid: `Q${'9'.repeat(19)}` } }
          : { person: { id: id(tag), title: wide(500), company: wide(500) } }),
      },
    }) as unknown as IngestEvent;
  const publisher = { id: id(''), name: wide(500), slug: wide(500) };
  return [
    entity('PERSON', 'p'),
    entity('COMPANY', 'c'),
    {
      type: 'podcast.upserted',
      event_id: id('ev-podcast'),
      occurred_at: OCCURRED,
      podcast: {
        id: id('pod'),
        title: wide(1000),
        slug: wide(500),
        language: wide(35),
        directory_ids: { apple: '9'.repeat(20), [wide(10)]: id('') },
        publisher,
        topics: [topic('t1')],
      },
    },
    {
      type: 'episode.transcribed',
      event_id: id('ev-episode'),
      occurred_at: OCCURRED,
      podcast: { id: id('pod'), title: wide(1000), slug: wide(500), language: wide(35), publisher },
      episode: {
        id: id('ep'),
        title: wide(2000),
        published_at: '2026-11-19T10:00:00Z',
        duration_seconds: 2_147_483_647,
        episode_number: 2_147_483_647,
        slug: wide(500),
        language: wide(35),
        topics: [topic('t1'), topic('t2')],
        videos: [{ url: 'https://v.example/x.mp4', width: 2_147_483_647, height: 2_147_483_647 }],
      },
      speakers: [
        {
          id: id('s1'),
          name: wide(500),
          role: 'GUEST',
          entity_id: id('p'),
          person_id: id('p'),
          description: wide(2000),
          descriptor: wide(500),
        },
      ],
      transcript: {
        language: wide(35),
        lines: [
          {
            number: 1,
            speaker_id: id('s1'),
            speaker: wide(500),
            start_seconds: 0,
            end_seconds: 1,
            text: expanding(20_000),
          },
          {
            number: 2_147_483_647,
            speaker_id: id('s1'),
            start_seconds: 1,
            end_seconds: 2,
            text: wide(20_000),
          },
        ],
      },
      mentions: [{ entity_id: id('c'), lines: [1, 2_147_483_647], variants: [wide(500)] }],
      segments: [
        {
          id: id('sg'),
          title: wide(500),
          number: 2_147_483_647,
          start_line: 1,
          end_line: 2_147_483_647,
          audio_url: `https://a.example/${'a'.repeat(3982)}`,
          read_type: 'HOST_READ',
        },
      ],
      clips: [
        {
          id: id('cl'),
          title: wide(500),
          start_seconds: 0,
          end_seconds: 1,
          speaker_id: id('s1'),
          segment_id: id('sg'),
        },
      ],
      ads: [
        { id: id('a1'), sponsor: { name: wide(SPONSOR) } },
        {
          id: id('a2'),
          sponsor: { id: id('o'), name: wide(SPONSOR), company_id: id('c') },
        },
      ],
    },
    {
      type: 'ranking.captured',
      event_id: id('ev-ranking'),
      occurred_at: OCCURRED,
      captured_at: '2026-11-20T06:00:00Z',
      chart: {
        source: 'youtube',
        chart_type: 'a'.repeat(100),
        country: 'us',
        category: { slug: 'b'.repeat(200), name: wide(500), external_id: id(''), parent_slug: id('') },
      },
      entries: [
        {
          rank: 500,
          podcast_id: id('pod'),
          external_id: id(''),
          growth_indicator: wide(50),
          view_count: Number.MAX_SAFE_INTEGER,
          show: {
            name: wide(500),
            publisher: wide(500),
            language: wide(35),
            total_episodes: Number.MAX_SAFE_INTEGER,
          },
        },
      ],
    },
  ] as IngestEvent[];
}

describe('the widest valid events', () => {
  let db: Db;
  let drop: () => Promise<void>;
  let store: EventStore;

  beforeAll(async () => {
    ({ db, drop } = await createTestDb());
    store = createPostgresEventStore(db);
  });
  afterAll(async () => {
    await store.close();
    await drop();
  });

  it('sends every id, key and name at its limit: one more four-byte character is refused', () => {
    const atLimit: string[] = [];
    const all: string[] = [];
    widestEvents().forEach((event, i) => {
      const walk = (node: unknown, pointer: string, set: (value: string) => void) => {
        if (typeof node === 'string') {
          all.push(pointer);
          set(`${node}𝔘`);
          if (validateEvent(event, `/events/${i}`).some((e) => e.location === pointer)) atLimit.push(pointer);
          set(node);
        } else if (node !== null && typeof node === 'object') {
          const record = node as Record<string, unknown>;
          for (const key of Object.keys(record))
            walk(record[key], `${pointer}/${key}`, (value) => {
              record[key] = value;
            });
        }
      };
      walk(event, `/events/${i}`, () => {});
    });
    // Only long free text is sent below its limit (or has none): it lands in no index.
    expect(all.filter((pointer) => !atLimit.includes(pointer))).toEqual([
      '/events/3/transcript/lines/0/text',
      '/events/3/transcript/lines/1/text',
      '/events/3/segments/0/title',
      '/events/3/clips/0/title',
    ]);
  });

  it('stores every such event in every read model, parking none', async () => {
    const events = widestEvents();
    expect(events.flatMap((event, i) => validateEvent(event, `/events/${i}`))).toEqual([]);
    await ingestEvents(store, events);
    // No retries: a failure is parked at once (and shows below) instead of being retried for seconds.
    for (const projection of PROJECTIONS) await catchUpProjection(db, store, projection, { retries: 0 });
    await refreshLeaderboardSnapshots(db, new Date('2026-11-20T12:00:00Z'));
    const parked = await db.query<{ subscription: string; error: string }>(
      'select subscription, left(error, 200) as error from parked_events order by subscription',
    );
    expect(parked.rows).toEqual([]);
    const count = async (table: string) =>
      Number((await db.query<{ n: string }>(`select count(*) as n from ${table}`)).rows[0]?.n);
    const stored = {
      entities: 2,
      entity_names: 6,
      podcasts: 1,
      catalog_episodes: 1,
      catalog_episode_topics: 2,
      podcast_list: 3,
      segments: 1,
      clips: 1,
      ads: 2,
      ad_facts: 2,
      podcast_format_episodes: 1,
      entity_mentions: 2,
      search_passage_rows: 1,
      podcast_link_episodes: 7,
      chart_entries: 1,
    };
    const counts: Record<string, number> = {};
    for (const table of Object.keys(stored)) counts[table] = await count(table);
    expect(counts).toEqual(stored);
  });
});
