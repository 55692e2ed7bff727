// An episode's language is its event's (episode, else transcript, else podcast block), else its
// show's stored language (docs/catalog.md, "An episode's language"): the Episode object, the
// episodes list's filter and the search, mentions and timeseries filters, whatever order the
// projections take the events in, after a rebuild of either, and with the response cache on.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogEpisodesProjection } from '../../projections/catalog-episodes/projection.ts';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { podcastsProjection } from '../../projections/podcasts/projection.ts';
import { catalogCapability, catalogProjections } from '../../src/catalog/capability.ts';
import type { Db } from '../../src/db/db.ts';
import type { EventStore } from '../../src/eventstore/port.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { buildHttpApp } from '../../src/http/app.ts';
import type { EpisodeTranscribed, IngestEvent } from '../../src/ingestion/events.ts';
import { ingestEvents } from '../../src/ingestion/ingest.ts';
import { searchCapability } from '../../src/search/capability.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';
import { rebuildProjection } from '../../src/subscriptions/projection-runner.ts';
import { entityEvent } from '../fixtures/events.ts';
import { createDb, ENGINES } from '../support/db.ts';
import { createTenant } from '../support/platform.ts';
import { catchUp } from '../support/projections.ts';
import { NOW, podcastEvent } from './support.ts';

/** An episode of `podcastId` that says "fabs" and mentions ent-fab; languages only where given. */
function episode(
  id: string,
  podcastId: string,
  occurredAt: string,
  languages: { episode?: string; transcript?: string; podcast?: string } = {},
): EpisodeTranscribed {
  return {
    type: 'episode.transcribed',
    event_id: randomUUID(),
    occurred_at: occurredAt,
    podcast: {
      id: podcastId,
      title: `Show ${podcastId}`,
      ...(languages.podcast ? { language: languages.podcast } : {}),
    },
    episode: {
      id,
      title: `Episode ${id}`,
      published_at: '2026-11-10T08:00:00Z',
      duration_seconds: 2400,
      ...(languages.episode ? { language: languages.episode } : {}),
    },
    speakers: [{ id: 's1', name: 'Hannah', role: 'HOST' }],
    transcript: {
      ...(languages.transcript ? { language: languages.transcript } : {}),
      lines: [
        {
          number: 1,
          speaker_id: 's1',
          start_seconds: 0,
          end_seconds: 5,
          text: 'Welcome.',
        },
        {
          number: 2,
          speaker_id: 's1',
          start_seconds: 5,
          end_seconds: 12,
          text: 'Fabs take years to build.',
        },
      ],
    },
    mentions: [{ entity_id: 'ent-fab', lines: [2] }],
  };
}

describe.each(ENGINES)("an episode's language on %s", (engine) => {
  let db: Db;
  let store: EventStore;
  let drop: () => Promise<void>;
  let headers: Record<string, string>;
  let app: Awaited<ReturnType<typeof buildHttpApp>>;
  let projections: Projection[];

  const ingest = async (events: IngestEvent[]) => {
    await ingestEvents(store, events);
    for (const projection of projections) await catchUp(db, store, projection);
  };
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are read as loose JSON
  const json = async (url: string, query: Record<string, string> = {}): Promise<any> => {
    const response = await app.inject({ url, query, headers });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };
  const ids = (body: { data: { id?: string; episode?: { id: string } }[] }) =>
    body.data.map((item) => item.episode?.id ?? item.id).sort();

  /** What each surface says of the episodes' languages, for `code`. */
  const answers = async (code: string) => {
    const range = {
      since: '2026-11-01',
      until: '2026-12-01',
      interval: 'month',
    };
    return {
      listed: ids(await json('/v1/podcasts/episodes', { language: code })),
      searched: ids(
        await json('/v1/podcasts/episodes/search', {
          keyword_search: 'fabs',
          language: code,
        }),
      ),
      mentioned: ids(
        await json('/v1/podcasts/mentions', {
          entity_id: 'ent-fab',
          language: code,
        }),
      ),
      series: (
        await json('/v1/podcasts/episodes/timeseries', {
          keyword_search: 'fabs',
          language: code,
          ...range,
        })
      ).total_episodes,
      mentionSeries: (
        await json('/v1/podcasts/mentions/timeseries', {
          entity_id: 'ent-fab',
          language: code,
          ...range,
        })
      ).total_mentions,
    };
  };
  const languageOf = async (id: string) => (await json(`/v1/podcasts/episodes/${id}`)).language;

  beforeAll(async () => {
    ({ db, drop } = await createDb(engine));
    store = createPostgresEventStore(db);
    const catalog = catalogCapability({ now: () => NOW });
    const search = searchCapability({ now: () => NOW });
    projections = [entitiesProjection, ...catalogProjections, ...(search.projections ?? [])];
    app = await buildHttpApp({
      db,
      cursorKey: Buffer.alloc(32, 7),
      routes: [...(catalog.routes ?? []), ...(search.routes ?? [])],
    });
    ({ headers } = await createTenant(db));
    await ingest([
      entityEvent({ id: 'ent-fab', name: 'Fab Corp', entity_type: 'COMPANY' }),
      // The README's walk-through: the show says en, its episode's event says nothing.
      podcastEvent({ id: 'pod-en', title: 'Chip Talk', language: 'en' }, '2026-11-20T07:00:00Z'),
      episode('ep-2', 'pod-en', '2026-11-20T09:00:00Z'),
      // The episode's own language, or its transcript's, or its podcast block's (older than the
      // show's upsert, so the show keeps en) wins over the show's.
      episode('ep-own', 'pod-en', '2026-11-20T09:00:00Z', {
        episode: 'fr-FR',
        transcript: 'de',
      }),
      episode('ep-transcript', 'pod-en', '2026-11-20T09:00:00Z', {
        transcript: 'de_DE',
      }),
      episode('ep-block', 'pod-en', '2026-11-20T06:00:00Z', { podcast: 'es' }),
      // A show whose upsert comes after its episode.
      episode('ep-late', 'pod-late', '2026-11-20T09:00:00Z'),
    ]);
  });
  afterAll(async () => {
    await app?.close();
    await store?.close();
    await drop?.();
  });

  it("takes the show's language when the episode's event names none", async () => {
    expect(await languageOf('ep-2')).toBe('en');
    expect(await languageOf('ep-own')).toBe('fr-FR');
    expect(await languageOf('ep-transcript')).toBe('de_DE');
    expect(await languageOf('ep-block')).toBe('es');
    expect((await json('/v1/podcasts/episodes/ep-late')).language).toBeUndefined();
    expect(ids(await json('/v1/podcasts', { language: 'en' }))).toEqual(['pod-en']);
    const en = {
      listed: ['ep-2'],
      searched: ['ep-2'],
      mentioned: ['ep-2'],
      series: 1,
      mentionSeries: 1,
    };
    expect(await answers('en')).toEqual(en);
    expect(await answers('fr')).toEqual({
      ...en,
      listed: ['ep-own'],
      searched: ['ep-own'],
      mentioned: ['ep-own'],
    });
    expect(await answers('de')).toEqual({
      ...en,
      listed: ['ep-transcript'],
      searched: ['ep-transcript'],
      mentioned: ['ep-transcript'],
    });
    const listed = await json('/v1/podcasts/episodes', {
      podcast_id: 'pod-en',
    });
    expect(
      Object.fromEntries(listed.data.map((e: { id: string; language: string }) => [e.id, e.language])),
    ).toEqual({
      'ep-2': 'en',
      'ep-own': 'fr-FR',
      'ep-transcript': 'de_DE',
      'ep-block': 'es',
    });
    expect(
      (await json('/v1/podcasts/pod-en/episodes')).data.find((e: { id: string }) => e.id === 'ep-2').language,
    ).toBe('en');
  });

  it('takes a show upserted after its episode, and a change of the show, past the response cache', async () => {
    const before = await answers('en');
    expect(before.listed).toEqual(['ep-2']);
    await ingest([
      podcastEvent({ id: 'pod-late', title: 'Late Show', language: 'en-GB' }, '2026-11-20T10:00:00Z'),
    ]);
    expect(await languageOf('ep-late')).toBe('en-GB');
    expect(await answers('en')).toEqual({
      listed: ['ep-2', 'ep-late'],
      searched: ['ep-2', 'ep-late'],
      mentioned: ['ep-2', 'ep-late'],
      series: 2,
      mentionSeries: 2,
    });

    await ingest([
      podcastEvent({ id: 'pod-en', title: 'Chip Talk', language: 'nl' }, '2026-11-20T11:00:00Z'),
    ]);
    expect(await languageOf('ep-2')).toBe('nl');
    expect(await languageOf('ep-own')).toBe('fr-FR');
    expect(await languageOf('ep-block')).toBe('es');
    expect((await answers('en')).listed).toEqual(['ep-late']);
    expect(await answers('nl')).toEqual({
      listed: ['ep-2'],
      searched: ['ep-2'],
      mentioned: ['ep-2'],
      series: 1,
      mentionSeries: 1,
    });
    const search = await json('/v1/podcasts/episodes/search', {
      keyword_search: 'fabs',
      language: 'pt',
    });
    expect(search.data).toEqual([]);
    expect(search.diagnostics.filter).toBe('language');
  });

  it('gives the same answers after a rebuild of either read model', async () => {
    const one = (id: string) => ({
      listed: [id],
      searched: [id],
      mentioned: [id],
      series: 1,
      mentionSeries: 1,
    });
    const expected = { en: one('ep-late'), nl: one('ep-2'), ep2: 'nl' };
    expect({
      en: await answers('en'),
      nl: await answers('nl'),
      ep2: await languageOf('ep-2'),
    }).toEqual(expected);
    for (const projection of [podcastsProjection, catalogEpisodesProjection]) {
      await rebuildProjection(db, store, projection);
      expect({
        en: await answers('en'),
        nl: await answers('nl'),
        ep2: await languageOf('ep-2'),
      }).toEqual(expected);
    }
  });
});
