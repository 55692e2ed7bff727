import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import { entityEvent } from '../fixtures/events.ts';
import { ENGINES } from '../support/db.ts';
import { type CatalogHarness, catalogHarness, episodeOf, podcastEvent } from './support.ts';

type Speaker = NonNullable<EpisodeTranscribed['speakers']>[number];

const episode = (id: string, day: number, speakers: Speaker[]) =>
  episodeOf({
    id,
    podcastId: 'pod-talk',
    publishedAt: `2026-11-${String(day).padStart(2, '0')}T06:00:00Z`,
    extra: { speakers },
  });

describe.each(ENGINES)("a show's speakers on GET /v1/podcasts/{id} (%s)", (engine) => {
  let h: CatalogHarness;

  beforeAll(async () => {
    h = await catalogHarness(engine);
    await h.ingest([
      entityEvent({ id: 'ent-ana', name: 'Ana Ruiz' }),
      podcastEvent({ id: 'pod-talk', title: 'Talk Show' }),
      podcastEvent({ id: 'pod-empty', title: 'No Episodes Yet' }),
      // Empty ids (the schema accepts them) name no one: three guests, not one; no name, no speaker.
      ...['Ann', 'Ben', 'Cal'].map((name, i) =>
        episodeOf({
          id: `blank-${i}`,
          podcastId: 'pod-blank',
          publishedAt: `2026-10-0${i + 1}T06:00:00Z`,
          extra: {
            speakers: [
              { id: `n${i}`, name, role: 'GUEST', entity_id: '', person_id: '' },
              { id: `x${i}`, name: '', role: 'GUEST' },
            ],
          },
        }),
      ),
      episode('talk-1', 1, [
        { id: 'a1', name: 'Ana Ruiz', role: 'HOST', entity_id: 'ent-ana' },
        { id: 'b1', name: 'Bob', role: 'GUEST' },
      ]),
      episode('talk-2', 2, [
        { id: 'a2', name: 'Ana Ruiz', role: 'CO_HOST', entity_id: 'ent-ana' },
        { id: 'b2', name: 'bob', role: 'guest' },
        { id: 'c2', name: 'Cy', role: 'GUEST', person_id: 'p-cy' },
      ]),
      episode('talk-3', 3, [
        { id: 'a3', name: 'Ana Ruiz-Lee', role: 'HOST', entity_id: 'ent-ana' },
        { id: 'c3', name: 'Cy C.', role: 'ANNOUNCER', person_id: 'p-cy' },
      ]),
    ]);
  });
  afterAll(() => h.close());

  it('lists each speaker once across episodes, most episodes first, with their latest name and usual role', async () => {
    const res = await h.get('/v1/podcasts/pod-talk');
    expect(res.statusCode).toBe(200);
    expect(res.json().speakers).toEqual([
      // CO_HOST folds into HOST; the entity is the Knowledge-graph entity (GET /v1/entities/{id}).
      {
        name: 'Ana Ruiz-Lee',
        role: 'HOST',
        occurrences: 3,
        entity: {
          id: 'ent-ana',
          name: 'Ana Ruiz',
          slug: 'ana-ruiz',
          entity_type: 'PERSON',
          aliases: [],
          type: { name: 'Person', slug: 'person' },
        },
      },
      // Two episodes each: Cy spoke last. One role each: the latest. No entity known for p-cy.
      { name: 'Cy C.', role: 'ANNOUNCER', occurrences: 2 },
      // Known by name only, case-folded: "Bob" and "bob" are one speaker.
      { name: 'bob', role: 'GUEST', occurrences: 2 },
    ]);
  });

  it('follows new episodes (the kept answer is not served after the episodes moved), at most 10', async () => {
    await h.get('/v1/podcasts/pod-talk');
    await h.ingest(
      Array.from({ length: 12 }, (_, i) =>
        episode(`talk-${4 + i}`, 4 + i, [
          { id: `a${4 + i}`, name: 'Ana Ruiz-Lee', role: 'HOST', entity_id: 'ent-ana' },
          { id: `g${4 + i}`, name: `Guest ${4 + i}`, role: 'GUEST' },
        ]),
      ),
    );
    const speakers = (await h.get('/v1/podcasts/pod-talk')).json().speakers;
    expect(speakers).toHaveLength(10);
    expect(speakers[0]).toMatchObject({ name: 'Ana Ruiz-Lee', occurrences: 15 });
    expect(speakers.slice(1, 3).map((s: { name: string }) => s.name)).toEqual(['Cy C.', 'bob']);
    // Then the one-episode guests, the latest first.
    expect(speakers.slice(3).map((s: { name: string }) => s.name)).toEqual(
      [15, 14, 13, 12, 11, 10, 9].map((n) => `Guest ${n}`),
    );
  });

  it('takes an empty entity_id, person_id or name for none', async () => {
    expect((await h.get('/v1/podcasts/pod-blank')).json().speakers).toEqual([
      { name: 'Cal', role: 'GUEST', occurrences: 1 },
      { name: 'Ben', role: 'GUEST', occurrences: 1 },
      { name: 'Ann', role: 'GUEST', occurrences: 1 },
    ]);
  });

  it('leaves speakers out for a show without episodes', async () => {
    const res = await h.get('/v1/podcasts/pod-empty');
    expect(res.statusCode).toBe(200);
    expect(res.json()).not.toHaveProperty('speakers');
  });
});

describe("a long-running show's speakers", () => {
  let h: CatalogHarness;
  beforeAll(async () => {
    h = await catalogHarness('postgres');
  });
  afterAll(() => h.close());

  it('are counted over its latest 1,000 episodes', async () => {
    const host = { name: 'Long Host', role: 'HOST', entity_id: 'ent-long' };
    await h.ingest(
      Array.from({ length: 1001 }, (_, i) =>
        episodeOf({
          id: `long-${i}`,
          podcastId: 'pod-long',
          publishedAt: new Date(Date.UTC(2023, 0, 1) + i * 86_400_000).toISOString(),
          extra: {
            speakers: [
              { id: `h${i}`, ...host },
              // Only in the oldest episode, the one past the 1,000 counted.
              ...(i === 0 ? [{ id: 'old', name: 'Old Guest', role: 'GUEST' }] : []),
            ],
          },
        }),
      ),
    );
    const speakers = (await h.get('/v1/podcasts/pod-long')).json().speakers;
    expect(speakers).toEqual([{ name: 'Long Host', role: 'HOST', occurrences: 1000 }]);
  });
});
