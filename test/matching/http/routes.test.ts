import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realtimeMatcher } from '../../../consumers/matcher/realtime.ts';
import { summarizer } from '../../../consumers/summarizer/summarizer.ts';
import { matchesProjection } from '../../../projections/matches/projection.ts';
import { buildHttpApp } from '../../../src/http/app.ts';
import { ingestionRoutes } from '../../../src/ingestion/routes.ts';
import { matchId } from '../../../src/matching/engine/match-id.ts';
import { matchingRoutes } from '../../../src/matching/http/routes.ts';
import { PreviewService } from '../../../src/matching/previews/preview.ts';
import { extractiveSummaryProvider } from '../../../src/matching/summary.ts';
import { createKey } from '../../../src/platform/keys.ts';
import { entityEvent, episodeEvent } from '../../fixtures/events.ts';
import { type PipelineFixture, pipelineFixture, project, runUntilCaughtUp, silentLog } from '../support.ts';

describe('the match endpoints, from ingestion to the read model', () => {
  let f: PipelineFixture;
  let app: FastifyInstance;
  let ingestKey: string;
  let alertId: string;
  const episodes = [
    episodeEvent({ lines: ['NVIDIA once.'], language: 'fr-FR' }),
    episodeEvent({ lines: ['NVIDIA one.', 'NVIDIA two.', 'NVIDIA three.'] }),
    episodeEvent({ lines: ['NVIDIA in passing.'] }),
  ];

  const get = (url: string, headers: Record<string, string> = f.tenant.headers) =>
    app.inject({ method: 'GET', url, headers });

  beforeAll(async () => {
    f = await pipelineFixture();
    ingestKey = (await createKey(f.db, { kind: 'ingest' })).key;
    app = await buildHttpApp({
      db: f.db,
      cursorKey: Buffer.alloc(32, 5),
      routes: [
        ingestionRoutes(f.store),
        matchingRoutes({
          store: f.store,
          previews: new PreviewService({ db: f.db, log: silentLog, now: f.now }),
          deliveriesOfMatch: async (_db, id) => [
            {
              id: `delivery-of-${id}`,
              channel: 'EMAIL',
              status: 'SENT',
              created_at: '2026-11-20T12:00:01.000Z',
              sent_at: '2026-11-20T12:00:02.000Z',
            },
          ],
        }),
      ],
    });
    const ingest = (events: unknown[]) =>
      app.inject({
        method: 'POST',
        url: '/v1/ingest/events',
        headers: { 'x-api-key': ingestKey },
        payload: { events },
      });
    expect(
      (await ingest([entityEvent({ id: 'ent-nvidia', name: 'NVIDIA', entity_type: 'COMPANY' })])).statusCode,
    ).toBe(202);
    await f.projectAll();
    alertId = (await f.createAlert('ent-nvidia')).id;
    for (const [i, episode] of episodes.entries()) {
      f.setClock(`2026-11-20T12:0${i + 1}:00.000Z`);
      expect((await ingest([episode])).statusCode).toBe(202);
      await runUntilCaughtUp(f.db, f.store, realtimeMatcher(f.deps));
    }
    await runUntilCaughtUp(f.db, f.store, summarizer({ ...f.deps, provider: extractiveSummaryProvider }));
    await project(f.db, f.store, matchesProjection);
  });
  afterAll(async () => {
    await app.close();
    await f.close();
  });

  it('lists the matches newest first, without episode block or windows', async () => {
    const response = await get(`/v1/alerts/${alertId}/matches`);
    expect(response.statusCode).toBe(200);
    const page = response.json();
    expect(page.has_more).toBe(false);
    expect(page.data.map((item: { source_id: string }) => item.source_id)).toEqual(
      [...episodes].reverse().map((episode) => episode.episode.id),
    );
    const [newest] = page.data;
    expect(newest).toEqual({
      id: matchId(alertId, episodes[2]!.episode.id),
      alert_id: alertId,
      monitor_id: alertId,
      kind: 'ENTITY_MENTION',
      entity_id: 'ent-nvidia',
      entity_type: 'COMPANY',
      source_id: episodes[2]!.episode.id,
      source_type: 'EPISODE',
      detected_at: '2026-11-20T12:03:00.000Z',
      mention_count: 1,
      is_backfilled: false,
      mention_variants: ['NVIDIA'],
      relevance: 'incidental',
      roles: ['HOST'],
      truncated: false,
      llm_summary: `Mentioned on 1 line of "${episodes[2]!.episode.title}" (Chip Talk). “NVIDIA in passing.”`,
    });
  });

  it('pages with a cursor that only this alert accepts', async () => {
    const first = (await get(`/v1/alerts/${alertId}/matches?limit=2`)).json();
    expect(first.data).toHaveLength(2);
    expect(first.has_more).toBe(true);
    const second = (await get(`/v1/alerts/${alertId}/matches?limit=2&cursor=${first.cursor}`)).json();
    expect(second.data.map((item: { source_id: string }) => item.source_id)).toEqual([
      episodes[0]!.episode.id,
    ]);
    const other = await f.createAlert('ent-nvidia');
    const rejected = await get(`/v1/alerts/${other.id}/matches?cursor=${first.cursor}`);
    expect(rejected.statusCode).toBe(400);
    expect(rejected.json().error_code).toBe('invalid_cursor');
  });

  it("applies the alert's current filters to the list", async () => {
    await f.service.update(f.caller, alertId, { filters: { languages: ['fr'] } });
    const french = (await get(`/v1/alerts/${alertId}/matches`)).json();
    expect(french.data.map((item: { source_id: string }) => item.source_id)).toEqual([
      episodes[0]!.episode.id,
    ]);
    await f.service.update(f.caller, alertId, { filters: { relevance: 'RELEVANT' } });
    const relevant = (await get(`/v1/alerts/${alertId}/matches`)).json();
    expect(relevant.data.map((item: { source_id: string }) => item.source_id)).toEqual([
      episodes[1]!.episode.id,
    ]);
    await f.service.update(f.caller, alertId, { filters: {} });
  });

  it('shows one match with its episode block, windows and deliveries', async () => {
    const id = matchId(alertId, episodes[1]!.episode.id);
    const response = await get(`/v1/alerts/matches/${id}`);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({
      id,
      alert_id: alertId,
      mention_count: 3,
      relevance: 'on_target',
      episode: {
        podcast_id: 'pod-1',
        podcast_title: 'Chip Talk',
        title: episodes[1]!.episode.title,
        podcast_popularity: 0.96,
        podcast_popularity_badge: 'Very Popular',
        published_at: '2026-11-20T06:00:00.000Z',
      },
      deliveries: [{ id: `delivery-of-${id}`, channel: 'EMAIL', status: 'SENT' }],
    });
    expect(body.windows).toHaveLength(1);
    expect(body.windows[0].lines).toHaveLength(3);
    expect(body.llm_summary).toContain('Mentioned on 3 lines');
  });

  it("answers 404 to another project's key and 401 without a key", async () => {
    const id = matchId(alertId, episodes[1]!.episode.id);
    expect((await get(`/v1/alerts/${alertId}/matches`, f.other.headers)).statusCode).toBe(404);
    expect((await get(`/v1/alerts/matches/${id}`, f.other.headers)).statusCode).toBe(404);
    expect((await get(`/v1/alerts/matches/${id}`, {})).statusCode).toBe(401);
    expect((await get('/v1/alerts/no-such-alert/matches')).statusCode).toBe(404);
    expect((await get('/v1/alerts/matches/no-such-match')).statusCode).toBe(404);
  });

  it("keeps a deleted alert's matches readable", async () => {
    const doomed = await f.createAlert('ent-nvidia');
    const episode = episodeEvent({ lines: ['NVIDIA before deletion.'] });
    await f.ingest([episode]);
    await runUntilCaughtUp(f.db, f.store, realtimeMatcher(f.deps));
    await f.service.delete(f.caller, doomed.id);
    await project(f.db, f.store, matchesProjection);
    const page = (await get(`/v1/alerts/${doomed.id}/matches`)).json();
    expect(page.data.map((item: { source_id: string }) => item.source_id)).toEqual([episode.episode.id]);
  });
});
