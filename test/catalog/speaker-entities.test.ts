import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { catalogCapability, catalogProjections } from '../../src/catalog/capability.ts';
import type { Db } from '../../src/db/db.ts';
import { entityRoutes } from '../../src/entities/routes.ts';
import type { EventStore } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import type { IngestEvent } from '../../src/ingestion/events.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { searchCapability } from '../../src/search/capability.ts';
import { entityEvent } from '../fixtures/events.ts';
import { createDb, ENGINES } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';
import { catchUp } from '../support/projections.ts';
import { episodeOf, NOW, podcastEvent } from './support.ts';

// A speaker's `entity` and `person` are the Knowledge-graph entity, as GET /v1/entities/{id}
// answers it, wherever the catalog and search show a speaker (docs/catalog.md, "Speakers' entities").

type Json = Record<string, unknown>;
// biome-ignore lint/suspicious/noExplicitAny: answers are read as loose JSON
type Loose = any;

const SPEAKERS = [
  { id: 's-ana', name: 'Ana Ruiz', role: 'HOST', entity_id: 'ent-ana', person_id: 'per-ana' },
  { id: 's-rep', name: 'Acme Rep', role: 'GUEST', entity_id: 'ent-acme' },
  { id: 's-ghost', name: 'Ghost', role: 'GUEST', entity_id: 'ent-nobody', person_id: 'per-nobody' },
  { id: 's-late', name: 'Lea Late', role: 'GUEST', entity_id: 'ent-late' },
];

const episode = episodeOf({
  id: 'ep-1',
  podcastId: 'pod-1',
  extra: {
    speakers: SPEAKERS,
    transcript: {
      language: 'en',
      lines: SPEAKERS.map((s, i) => ({
        number: i + 1,
        speaker_id: s.id,
        start_seconds: i * 10,
        end_seconds: i * 10 + 9,
        text: `The harbor at dawn, says ${s.name}.`,
      })),
    },
    clips: SPEAKERS.map((s, i) => ({
      id: `clip-${s.id}`,
      title: `Clip of ${s.name}`,
      start_seconds: i * 10,
      end_seconds: i * 10 + 9,
      engagement_score: 90 - i,
      speaker_id: s.id,
    })),
  },
});

describe.each(ENGINES)("speakers' entities on %s", (engine) => {
  let db: Db;
  let drop: () => Promise<void>;
  let store: EventStore;
  let app: FastifyInstance;
  let headers: Record<string, string>;
  const search = searchCapability({ now: () => NOW });
  const projections = [entitiesProjection, ...catalogProjections, ...(search.projections ?? [])];

  const ingest = async (events: IngestEvent[]) => {
    await ingestEvents(store, events);
    for (const projection of projections) await catchUp(db, store, projection);
  };
  const get = async (url: string): Promise<Loose> => {
    const response = await app.inject({ url, headers });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };
  const entityOf = (id: string) => get(`/v1/entities/${id}`);
  const byName = (speakers: Json[], name: string) => speakers.find((s) => s.name === name);

  /** The speaker `name` as each route shows it: show, episode, episode clips, clip list, clip, search. */
  const everywhere = async (name: string) => {
    const clipId = `clip-${SPEAKERS.find((s) => s.name === name)!.id}`;
    const clipOf = (clips: Json[]) => clips.find((c) => c.id === clipId)!.speaker as Json;
    const found = (await get('/v1/podcasts/episodes/search?keyword_search=harbor')).data[0];
    return {
      show: byName((await get('/v1/podcasts/pod-1')).speakers, name),
      episode: byName((await get('/v1/podcasts/episodes/ep-1?include=speakers')).speakers, name),
      episodeClip: clipOf((await get('/v1/podcasts/episodes/ep-1?include=clips')).clips),
      clipList: clipOf((await get('/v1/podcasts/clips?episode_id=ep-1')).data),
      clip: (await get(`/v1/podcasts/clips/${clipId}`)).speaker,
      searchClip: clipOf(found.clips),
    };
  };

  beforeAll(async () => {
    ({ db, drop } = await createDb(engine));
    store = createPostgresEventStore(db);
    const catalog = catalogCapability({ now: () => NOW });
    app = await buildHttpApp({
      db,
      cursorKey: Buffer.alloc(32, 7),
      routes: [...(catalog.routes ?? []), ...(search.routes ?? []), entityRoutes()],
    });
    headers = (await createTenant(db)).headers;
    await ingest([
      entityEvent({
        id: 'ent-ana',
        slug: 'ana-ruiz',
        name: 'Ana Ruiz',
        aliases: ['Ana'],
        description: 'Marine biologist',
        image_url: 'https://img.example/ana.png',
        wikipedia_url: 'https://en.wikipedia.org/wiki/Ana_Ruiz',
        person: { title: 'Director', company: 'Acme' },
      }),
      entityEvent({ id: 'per-ana', slug: 'ana-ruiz-person', name: 'Ana Ruiz (person)' }),
      entityEvent({
        id: 'ent-acme',
        name: 'Acme',
        entity_type: 'COMPANY',
        company: { domain: 'acme.com', ticker: 'ACME' },
      }),
      podcastEvent({ id: 'pod-1', title: 'Harbor Lights' }),
      episode,
    ]);
  }, 120_000);
  afterAll(async () => {
    await app.close();
    await store.close();
    await drop();
  });

  it('shows the entity and person as GET /v1/entities/{id} answers them, on every route', async () => {
    const [ana, perAna, acme] = await Promise.all(['ent-ana', 'per-ana', 'ent-acme'].map(entityOf));
    expect(ana).toMatchObject({
      description: 'Marine biologist',
      wikipedia_url: 'https://en.wikipedia.org/wiki/Ana_Ruiz',
      person: { id: 'ent-ana', title: 'Director', company: 'Acme' },
      type: { name: 'Person', slug: 'person' },
    });
    expect(acme).toMatchObject({ company: { id: 'ent-acme', domain: 'acme.com', ticker: 'ACME' } });

    const { show, ...perEpisode } = await everywhere('Ana Ruiz');
    // A show's speaker has the entity only (entity_id, else person_id).
    expect(show).toEqual({ name: 'Ana Ruiz', role: 'HOST', occurrences: 1, entity: ana });
    expect(perEpisode.episode).toMatchObject({ association_id: 's-ana', entity: ana, person: perAna });
    for (const speaker of Object.values(perEpisode))
      expect(speaker).toMatchObject({ name: 'Ana Ruiz', entity: ana, person: perAna });
    for (const speaker of Object.values(await everywhere('Acme Rep'))) {
      expect(speaker!.entity).toEqual(acme);
      expect(speaker).not.toHaveProperty('person');
    }
  });

  it('declares the same schema for them in /openapi.json as for GET /v1/entities/{id}', async () => {
    const { paths } = await get('/openapi.json');
    const answer = (path: string) => paths[path].get.responses['200'].content['application/json'].schema;
    const clip = (schema: Loose) => schema.properties.speaker.properties;
    const entity = answer('/v1/entities/{id}');
    const episode = answer('/v1/podcasts/episodes/{id}').properties;
    for (const schema of [
      answer('/v1/podcasts/{id}').properties.speakers.items.properties.entity,
      episode.speakers.items.properties.entity,
      episode.speakers.items.properties.person,
      clip(episode.clips.items).entity,
      clip(answer('/v1/podcasts/clips/{id}')).person,
      clip(answer('/v1/podcasts/episodes/search').properties.data.items.properties.clips.items).entity,
    ])
      expect(schema).toEqual(entity);
  });

  it('leaves out an entity or person that is not known (no null)', async () => {
    expect((await app.inject({ url: '/v1/entities/ent-nobody', headers })).statusCode).toBe(404);
    const ghost = await everywhere('Ghost');
    for (const speaker of Object.values(ghost)) {
      expect(speaker).toMatchObject({ name: 'Ghost', role: 'GUEST' });
      expect(speaker).not.toHaveProperty('entity');
      expect(speaker).not.toHaveProperty('person');
    }
    expect(ghost.episode).toEqual({ association_id: 's-ghost', name: 'Ghost', role: 'GUEST' });
  });

  it('shows an entity upserted after the episode, and each later version of it', async () => {
    for (const speaker of Object.values(await everywhere('Lea Late')))
      expect(speaker).not.toHaveProperty('entity');
    await ingest([entityEvent({ id: 'ent-late', name: 'Lea Late' }, '2026-11-20T11:00:00Z')]);
    const first = await entityOf('ent-late');
    for (const speaker of Object.values(await everywhere('Lea Late'))) expect(speaker!.entity).toEqual(first);
    await ingest([
      entityEvent(
        {
          id: 'ent-late',
          name: 'Lea Late',
          description: 'Now known',
          image_url: 'https://img.example/lea.png',
        },
        '2026-11-20T11:30:00Z',
      ),
    ]);
    const second = await entityOf('ent-late');
    expect(second).toMatchObject({ description: 'Now known', image_url: 'https://img.example/lea.png' });
    for (const speaker of Object.values(await everywhere('Lea Late')))
      expect(speaker!.entity).toEqual(second);
  });
});
