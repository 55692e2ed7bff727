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
      // CO_HOST folds into HOST; the entity is the knowledge graph's.
      {
        name: 'Ana Ruiz-Lee',
        role: 'HOST',
        occurrences: 3,
        entity: { id: 'ent-ana', name: 'Ana Ruiz', slug: 'ana-ruiz' },
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

  it('leaves speakers out for a show without episodes', async () => {
    const res = await h.get('/v1/podcasts/pod-empty');
    expect(res.statusCode).toBe(200);
    expect(res.json()).not.toHaveProperty('speakers');
  });
});
