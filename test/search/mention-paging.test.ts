import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { episodeEvent } from '../fixtures/events.ts';
import { quokka } from './fixture.ts';
import { type SearchHarness, searchHarness } from './support.ts';

const MENTIONS = '/v1/podcasts/mentions';
let h: SearchHarness;

// 150 episodes across the first two rounds (64, then 256): a tie of 70 on one instant that straddles
// the first round's end, and times apart by microseconds only; every third one mentions the name.
const published = (i: number) =>
  i < 70 ? '2026-06-01T00:00:00Z' : `2026-05-01T00:00:00.${String(1000 - i).padStart(6, '0')}Z`;
const mentions = (i: number) => i % 3 === 0;

beforeAll(async () => {
  h = await searchHarness('postgres');
  await h.ingest([
    quokka,
    ...Array.from({ length: 150 }, (_, i) =>
      episodeEvent({
        id: `ep-${String(i).padStart(3, '0')}`,
        lines: [mentions(i) ? 'Quokka Labs again.' : 'Nothing to see.'],
        publishedAt: published(i),
      }),
    ),
  ]);
});
afterAll(() => h?.close());

describe('mention list paging', () => {
  it.each([1, 4, 7, 25, 100])(
    'pages of %i list every mentioning episode once, newest first',
    async (limit) => {
      const expected = (
        await h.db.query<{ id: string }>(
          `select id from catalog_episodes where id = any($1::text[]) order by published_at desc, id desc`,
          [
            Array.from({ length: 150 }, (_, i) => i)
              .filter(mentions)
              .map((i) => `ep-${String(i).padStart(3, '0')}`),
          ],
        )
      ).rows.map((r) => r.id);
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 100; page++) {
        const { status, body } = await h.json(MENTIONS, {
          entity_id: 'ent-quokka',
          limit: String(limit),
          ...(cursor ? { cursor } : {}),
        });
        expect(status).toBe(200);
        seen.push(...body.data.map((item: { episode: { id: string } }) => item.episode.id));
        if (!body.has_more) break;
        cursor = body.cursor;
      }
      expect(seen).toEqual(expected);
    },
  );
});

describe('mention list cursors', () => {
  it('of another list are refused with 400 invalid_cursor, not read as a position', async () => {
    // What GET /v1/projects/{id}/alerts issues (src/http/pagination.ts): also a `p` and an `i`.
    const alerts = h.app.cursors.encode({
      p: 'ePsB3h7PGAowQfpa7Sfnah',
      c: '2026-11-28T20:54:41.802Z',
      i: 'ChdjH1WKdgrgR4gU4JLW52',
    });
    const { status, body } = await h.json(MENTIONS, { entity_id: 'ent-quokka', cursor: alerts });
    expect(status).toBe(400);
    expect(body).toMatchObject({
      error_code: 'invalid_cursor',
      errors: [{ location: 'query.cursor', message: 'issued for another list' }],
    });
  });
});
