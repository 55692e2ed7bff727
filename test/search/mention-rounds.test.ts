import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { episodeEvent } from '../fixtures/events.ts';
import { quokka } from './fixture.ts';
import { type SearchHarness, searchHarness } from './support.ts';

const MENTIONS = '/v1/podcasts/mentions';
let h: SearchHarness;

// More recent episodes without the name than a mention list reads in its first round (64).
beforeAll(async () => {
  h = await searchHarness('postgres');
  const recent = Array.from({ length: 100 }, (_, i) =>
    episodeEvent({
      id: `ep-recent-${i}`,
      lines: ['Nothing to see here.'],
      publishedAt: new Date(Date.UTC(2026, 5, 1) + i * 3_600_000).toISOString(),
    }),
  );
  await h.ingest([
    quokka,
    ...recent,
    episodeEvent({
      id: 'ep-quokka-1',
      lines: ['Quokka Labs raised money.'],
      publishedAt: '2024-03-01T00:00:00Z',
    }),
    episodeEvent({
      id: 'ep-quokka-2',
      lines: ['Nothing.', 'quokka labs, again'],
      publishedAt: '2024-02-01T00:00:00Z',
    }),
  ]);
});
afterAll(() => h?.close());

const ids = (body: { data: { episode: { id: string } }[] }) => body.data.map((item) => item.episode.id);

describe('mention lists past the newest episodes', () => {
  it('finds mentions older than the episodes read first, and pages across them', async () => {
    const all = await h.json(MENTIONS, { entity_id: 'ent-quokka' });
    expect(ids(all.body)).toEqual(['ep-quokka-1', 'ep-quokka-2']);
    const first = await h.json(MENTIONS, {
      entity_id: 'ent-quokka',
      limit: '1',
    });
    expect(ids(first.body)).toEqual(['ep-quokka-1']);
    expect(first.body.has_more).toBe(true);
    const next = await h.json(MENTIONS, {
      entity_id: 'ent-quokka',
      limit: '1',
      cursor: first.body.cursor,
    });
    expect(ids(next.body)).toEqual(['ep-quokka-2']);
    expect(next.body.has_more).toBe(false);
    expect(next.body.data[0].mention_count).toBe(1);
  });
});
