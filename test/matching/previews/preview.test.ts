import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { episodesProjection } from '../../../projections/episodes/projection.ts';
import { buildHttpApp } from '../../../src/http/app.ts';
import { matchingRoutes } from '../../../src/matching/http/routes.ts';
import { PreviewService } from '../../../src/matching/previews/preview.ts';
import { episodeEvent } from '../../fixtures/events.ts';
import { type PipelineFixture, pipelineFixture, previewApp, project, silentLog } from '../support.ts';

describe('alert previews', () => {
  let f: PipelineFixture;
  let app: FastifyInstance;
  let previews: PreviewService;
  const NVIDIA = [{ entity_type: 'COMPANY', entity_id: 'ent-nvidia' }];
  const SPEAKER = [{ entity_type: 'PERSON', entity_id: 'ent-jensen' }];

  const guest = (role: string, publishedAt: string) =>
    episodeEvent({
      publishedAt,
      lines: ['Hello.', 'Thanks for having me.'],
      speakers: [
        { id: 'spk-host', name: 'Hannah Host', role: 'HOST' },
        { id: 'spk-guest', name: 'Jensen Huang', role, entity_id: 'ent-jensen' },
      ],
    });
  const recent = [
    episodeEvent({ lines: ['NVIDIA today.'], publishedAt: '2026-11-20T06:00:00Z' }),
    episodeEvent({ lines: ['NVIDIA yesterday.'], publishedAt: '2026-11-19T23:00:00Z' }),
    episodeEvent({ lines: ['NVIDIA en français.'], publishedAt: '2026-11-19T08:00:00Z', language: 'fr' }),
    ...Array.from({ length: 4 }, (_, i) =>
      episodeEvent({ lines: [`NVIDIA number ${i}.`], publishedAt: `2026-11-1${5 + i}T10:00:00Z` }),
    ),
  ];
  const tooOld = episodeEvent({ lines: ['NVIDIA last month.'], publishedAt: '2026-11-13T11:00:00Z' });

  const post = (
    body: object,
    query = '',
    headers: Record<string, string> = f.tenant.headers,
    projectId = f.tenant.project.id,
  ) =>
    app.inject({
      method: 'POST',
      url: `/v1/projects/${projectId}/alerts/preview${query}`,
      headers,
      payload: body,
    });
  const poll = (id: string, headers: Record<string, string> = f.tenant.headers) =>
    app.inject({ method: 'GET', url: `/v1/alerts/preview/${id}`, headers });
  const completed = async (body: object, query = '') => {
    const started = await post(body, query);
    expect([200, 202]).toContain(started.statusCode);
    await previews.idle();
    const result = await poll(started.json().preview_id);
    expect(result.statusCode).toBe(200);
    return result.json();
  };

  beforeAll(async () => {
    f = await pipelineFixture();
    await f.entity('ent-nvidia', 'NVIDIA');
    await f.entity('ent-jensen', 'Jensen Huang', [], 'PERSON');
    await f.ingest([
      ...recent,
      tooOld,
      guest('GUEST', '2026-11-18T10:00:00Z'),
      guest('PANELIST', '2026-11-17T10:00:00Z'),
      guest('HOST', '2026-11-16T10:00:00Z'),
    ]);
    await project(f.db, f.store, episodesProjection);
    ({ previews, app } = await previewApp(f));
  });
  afterAll(async () => {
    await app.close();
    await f.close();
  });

  it('sweeps the window asynchronously: total, every day oldest first, and the 5 newest matches in full', async () => {
    const started = await post({ entities: NVIDIA });
    expect(started.statusCode).toBe(202);
    expect(started.json()).toEqual({ preview_id: expect.any(String), status: 'in_progress', window_days: 7 });
    await previews.idle();
    const result = (await poll(started.json().preview_id)).json();
    expect(result).toMatchObject({
      preview_id: started.json().preview_id,
      status: 'completed',
      window_days: 7,
      started_at: '2026-11-20T12:00:00.000Z',
      completed_at: '2026-11-20T12:00:00.000Z',
      total_matches: 7,
    });
    expect(result.by_day).toEqual([
      { date: '2026-11-13', count: 0 },
      { date: '2026-11-14', count: 0 },
      { date: '2026-11-15', count: 1 },
      { date: '2026-11-16', count: 1 },
      { date: '2026-11-17', count: 1 },
      { date: '2026-11-18', count: 1 },
      { date: '2026-11-19', count: 2 },
      { date: '2026-11-20', count: 1 },
    ]);
    expect(result.sample.map((match: { source_id: string }) => match.source_id)).toEqual(
      [recent[0], recent[1], recent[2], recent[6], recent[5]].map((episode) => episode!.episode.id),
    );
    const [first] = result.sample;
    expect(first).toMatchObject({
      kind: 'ENTITY_MENTION',
      entity_id: 'ent-nvidia',
      mention_count: 1,
      mention_variants: ['NVIDIA'],
      is_backfilled: false,
      episode: { podcast_id: 'pod-1', title: recent[0]!.episode.title },
    });
    expect(first.windows[0].lines[0].is_mention).toBe(true);
    expect(first).not.toHaveProperty('alert_id');
  });

  it('keeps one id and one count whatever relevance and source_popularity say', async () => {
    const plain = await completed({ entities: NVIDIA });
    const filtered = await post({
      entities: NVIDIA,
      filters: { relevance: 'RELEVANT', source_popularity: ['TOP_PODCAST'] },
    });
    expect(filtered.statusCode).toBe(200);
    expect(filtered.json()).toEqual({ preview_id: plain.preview_id, status: 'completed', window_days: 7 });
  });

  it('narrows the count by languages and speaker_roles, each under its own id', async () => {
    const plain = await completed({ entities: NVIDIA });
    const french = await completed({ entities: NVIDIA, filters: { languages: ['fr'] } });
    expect(french.preview_id).not.toBe(plain.preview_id);
    expect(french.total_matches).toBe(1);

    const speakers = await completed({ entities: SPEAKER, kind: 'PODCAST_SPEAKER' });
    expect(speakers.total_matches).toBe(2);
    const guests = await completed({
      entities: SPEAKER,
      kind: 'podcast_speaker',
      filters: { speaker_roles: ['guest'] },
    });
    expect(guests.total_matches).toBe(1);
    expect(guests.preview_id).not.toBe(speakers.preview_id);
  });

  it('sweeps only the requested window', async () => {
    const day = await completed({ entities: NVIDIA }, '?window_days=1');
    expect(day.window_days).toBe(1);
    expect(day.total_matches).toBe(2);
    expect(day.by_day).toEqual([
      { date: '2026-11-19', count: 1 },
      { date: '2026-11-20', count: 1 },
    ]);
    const month = await completed({ entities: NVIDIA }, '?window_days=30');
    expect(month.total_matches).toBe(8);
    expect((await post({ entities: NVIDIA }, '?window_days=31')).statusCode).toBe(400);
  });

  it('rejects speaker_roles on a non-PODCAST_SPEAKER preview, unknown entities and several entities with 422', async () => {
    const roles = await post({ entities: NVIDIA, filters: { speaker_roles: ['GUEST'] } });
    expect(roles.statusCode).toBe(422);
    expect(roles.json().error_code).toBe('speaker_roles_not_allowed');
    const unknown = await post({ entities: [{ entity_type: 'COMPANY', entity_id: 'ent-nobody' }] });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().error_code).toBe('unresolved_reference');
    const two = await post({ entities: [...NVIDIA, ...SPEAKER] });
    expect(two.statusCode).toBe(422);
    expect(two.json().error_code).toBe('invalid_parameter');
    expect((await post({ entities: NVIDIA, title: 'x' })).statusCode).toBe(422);
  });

  it("is member-only: another project's key gets 404 on the poll and 403 on the project path", async () => {
    const started = await post({ entities: NVIDIA });
    expect((await poll(started.json().preview_id, f.other.headers)).statusCode).toBe(404);
    expect((await post({ entities: NVIDIA }, '', f.other.headers)).statusCode).toBe(403);
    expect((await poll(started.json().preview_id, {})).statusCode).toBe(401);
  });

  it('expires after one hour; the same request then sweeps again', async () => {
    const first = await completed({ entities: NVIDIA }, '?window_days=2');
    f.advance(60 * 60 * 1000);
    expect((await poll(first.preview_id)).statusCode).toBe(404);
    const { rows } = await f.db.query('select 1 from previews where id = $1', [first.preview_id]);
    expect(rows).toHaveLength(0);
    const again = await post({ entities: NVIDIA }, '?window_days=2');
    expect(again.statusCode).toBe(202);
    expect(again.json().preview_id).toBe(first.preview_id);
    await previews.idle();
    expect((await poll(first.preview_id)).json().started_at).toBe('2026-11-20T13:00:00.000Z');
    f.setClock('2026-11-20T12:00:00.000Z');
  });

  it('is finished by another process when the sweeping one died', async () => {
    const first = await completed({ entities: NVIDIA }, '?window_days=3');
    // As if the process sweeping it had died: in progress, its lease run out.
    await f.db.query(
      `update previews set status = 'in_progress', total_matches = null, claimed_until = $2 where id = $1`,
      [first.preview_id, new Date('2026-11-20T11:00:00Z')],
    );
    expect((await poll(first.preview_id)).json().status).toBe('in_progress');
    const standby = new PreviewService({ db: f.db, log: silentLog, now: f.now });
    expect(await standby.takeOverOne()).toBe(true);
    expect(await standby.takeOverOne()).toBe(false);
    expect((await poll(first.preview_id)).json()).toMatchObject({
      status: 'completed',
      total_matches: first.total_matches,
    });
  });

  it('bounds sweeps per project and per process: beyond the short queue 429 with Retry-After, and queued previews finish right', async () => {
    const reference = await completed({ entities: NVIDIA }, '?window_days=30');
    const limited = new PreviewService({
      db: f.db,
      log: silentLog,
      now: f.now,
      limits: { perProcess: 2, perKey: 1, queue: 2 },
    });
    const limitedApp = await buildHttpApp({
      db: f.db,
      cursorKey: Buffer.alloc(32, 5),
      routes: [matchingRoutes({ store: f.store, previews: limited })],
    });
    const start = (windowDays: number, tenant: typeof f.tenant) =>
      limitedApp.inject({
        method: 'POST',
        url: `/v1/projects/${tenant.project.id}/alerts/preview?window_days=${windowDays}`,
        headers: tenant.headers,
        payload: { entities: NVIDIA },
      });
    const statuses: number[] = [];
    const accepted: string[] = [];
    let refused: Awaited<ReturnType<typeof start>> | undefined;
    // Sweeps wait on the lock, so every preview started here is still running or queued.
    await f.db.transaction(async (tx) => {
      await tx.query('lock table episodes in access exclusive mode');
      for (const [windowDays, tenant] of [
        [20, f.tenant], // runs
        [21, f.tenant], // waits: the project's one slot is taken
        [22, f.tenant], // 429: the project already has one waiting
        [20, f.tenant], // the running preview again: answered without a slot
        [20, f.other], // runs: the process's second slot
        [21, f.other], // waits: the queue's second place
        [22, f.other], // 429: the project already has one waiting
      ] as const) {
        const response = await start(windowDays, tenant);
        statuses.push(response.statusCode);
        if (response.statusCode === 202) accepted.push(response.json().preview_id);
        else refused = response;
      }
    });
    expect(statuses).toEqual([202, 202, 429, 202, 202, 202, 429]);
    expect(refused!.headers['retry-after']).toBe('5');
    expect(refused!.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(refused!.json()).toMatchObject({ status: 429, error_code: 'rate_limit_exceeded' });
    await limited.idle();
    for (const id of new Set(accepted)) {
      const { rows } = await f.db.query<{ status: string; total_matches: number }>(
        'select status, total_matches from previews where id = $1',
        [id],
      );
      expect(rows[0]).toEqual({ status: 'completed', total_matches: reference.total_matches });
    }
    expect((await start(22, f.tenant)).statusCode).toBe(202);
    await limited.idle();
    await limitedApp.close();
  });
});
