import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveriesOfMatch, deliveryMatches } from '../../../projections/deliveries/queries.ts';
import { createTenant } from '../../support/platform.ts';
import { type DeliveryFixture, deliveryFixture, deliveryRows, ENTITY_ID } from '../support.ts';

describe('delivery endpoints', () => {
  let f: DeliveryFixture;
  let app: FastifyInstance;
  let alertId: string;
  let matchId: string;
  let byChannel: Record<string, string>;
  let otherKey: string;
  let member: { 'x-api-key': string };

  beforeAll(async () => {
    f = await deliveryFixture();
    app = await f.app();
    member = f.tenant.headers;
    otherKey = (await createTenant(f.db, 'TEAM')).key;
    const alert = await f.createAlert();
    alertId = alert.id;
    matchId = (await f.match(alertId)).matchId;
    await f.deliverAll();
    byChannel = Object.fromEntries((await deliveryRows(f.db, alertId)).map((r) => [r.channel, r.id]));
  });
  afterAll(async () => {
    await app?.close();
    await f?.close();
  });

  it('lists the deliveries of an alert with compact matches', async () => {
    const response = await app.inject({ url: `/v1/alerts/${alertId}/deliveries?limit=2`, headers: member });
    expect(response.statusCode).toBe(200);
    const page = response.json();
    expect(page.data).toHaveLength(2);
    expect(page.has_more).toBe(true);
    expect(Object.keys(page.data[0].matches[0]).sort()).toEqual(
      [
        'detected_at',
        'entity_id',
        'entity_type',
        'id',
        'kind',
        'mention_count',
        'source_id',
        'source_type',
      ].sort(),
    );
    const next = await app.inject({
      url: `/v1/alerts/${alertId}/deliveries?limit=2&cursor=${encodeURIComponent(page.cursor)}`,
      headers: member,
    });
    const rest = next.json();
    expect(rest.data).toHaveLength(1);
    expect(new Set([...page.data, ...rest.data].map((d: { id: string }) => d.id))).toEqual(
      new Set(Object.values(byChannel)),
    );
  });

  it("answers 400 invalid_cursor for another list's cursor or another alert's deliveries cursor", async () => {
    const other = (await f.createAlert()).id;
    await f.match(other);
    await f.deliverAll();
    const otherPage = (
      await app.inject({ url: `/v1/alerts/${other}/deliveries?limit=1`, headers: member })
    ).json();
    expect(otherPage.cursor).toBeDefined();
    const detectedAt = new Date().toISOString();
    const foreign = {
      "another alert's deliveries": otherPage.cursor as string,
      "this alert's matches": app.cursors.encode({ a: alertId, d: detectedAt, i: matchId }),
      "a delivery's matches": app.cursors.encode({ d: byChannel.EMAIL, o: 1 }),
    };
    for (const [what, cursor] of Object.entries(foreign)) {
      const response = await app.inject({
        url: `/v1/alerts/${alertId}/deliveries?limit=2&cursor=${encodeURIComponent(cursor)}`,
        headers: member,
      });
      expect(response.statusCode, what).toBe(400);
      expect(response.json()).toMatchObject({
        error_code: 'invalid_cursor',
        errors: [{ location: 'query.cursor' }],
      });
    }
  });

  it("hides another project's alert deliveries as missing", async () => {
    const response = await app.inject({
      url: `/v1/alerts/${alertId}/deliveries`,
      headers: { 'x-api-key': otherKey },
    });
    expect(response.statusCode).toBe(404);
  });

  it('gives members the full delivery with viewer_can_manage true and the attempt audit', async () => {
    const response = await app.inject({
      url: `/v1/alerts/deliveries/${byChannel.WEBHOOK}?view=detailed`,
      headers: member,
    });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({
      id: byChannel.WEBHOOK,
      alert_id: alertId,
      monitor_id: alertId,
      channel: 'WEBHOOK',
      status: 'SENT',
      match_count: 1,
      matches_has_more: false,
      has_webhook_payload: true,
      viewer_can_manage: true,
      alert: { id: alertId, title: 'Jensen on podcasts', project_id: f.tenant.project.id },
    });
    expect(body.matches[0]).toMatchObject({
      id: matchId,
      mention_variants: ['Jensen Huang', 'Jensen'],
      relevance: 'on_target',
    });
    expect(body.matches[0].windows).toHaveLength(1);
    expect(body.matches[0].episode.podcast_title).toBe('Chip Talk');
    // Each match carries its deliveries like the single match read, optional fields omitted, not null.
    expect(body.matches[0].deliveries).toEqual(await deliveriesOfMatch(f.db, matchId));
    expect(body.matches[0].deliveries.map((d: { channel: string }) => d.channel).sort()).toEqual([
      'CHAT',
      'EMAIL',
      'WEBHOOK',
    ]);
    for (const delivery of body.matches[0].deliveries) expect(delivery).not.toHaveProperty('error_message');
    expect(body.attempts).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'sent', status_code: 200 }),
    ]);
    const summary = await app.inject({ url: `/v1/alerts/deliveries/${byChannel.WEBHOOK}`, headers: member });
    expect(summary.json().matches[0].windows).toBeUndefined();
    expect(summary.json().matches[0].deliveries).toHaveLength(3);
  });

  it('gives everyone else the reduced public payload with viewer_can_manage false', async () => {
    for (const headers of [{}, { 'x-api-key': otherKey }]) {
      const response = await app.inject({
        url: `/v1/alerts/deliveries/${byChannel.EMAIL}?view=detailed`,
        headers,
      });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body.viewer_can_manage).toBe(false);
      expect(body.has_webhook_payload).toBe(false);
      expect(body.alert).toEqual({ kind: 'ENTITY_MENTION', title: 'Jensen on podcasts' });
      expect(body.alert_id).toBeUndefined();
      expect(body.attempts).toBeUndefined();
      expect(body.matches[0]).toMatchObject({
        id: matchId,
        episode: { title: expect.stringContaining('chips') },
      });
      expect(body.matches[0].windows).toBeUndefined();
      expect(body.matches[0].mention_variants).toBeUndefined();
    }
  });

  it('answers 404 for an unknown delivery id', async () => {
    const response = await app.inject({ url: '/v1/alerts/deliveries/0000000000000000000000' });
    expect(response.statusCode).toBe(404);
  });

  it('pages the matches of a digest with matches_limit and matches_cursor, with the true match_count', async () => {
    const digest = await f.createAlert({
      title: 'Daily Jensen',
      delivery_cadence: 'DAILY',
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: f.webhook.id }],
    });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await f.match(digest.id)).matchId);
      f.clock.advance(60_000);
    }
    await f.fanOut();
    const { scheduleDueDigests } = await import('../../../consumers/digests/digests.ts');
    f.clock.set('2026-11-21T00:05:00Z');
    await scheduleDueDigests({ ...f.fanoutDeps });
    await f.deliverAll();
    const [row] = await deliveryRows(f.db, digest.id);
    expect(row).toMatchObject({ type: 'alert.digest', match_count: 5, status: 'SENT' });
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page++) {
      const response = await app.inject({
        url: `/v1/alerts/deliveries/${row!.id}?matches_limit=2${cursor ? `&matches_cursor=${encodeURIComponent(cursor)}` : ''}`,
      });
      const body = response.json();
      expect(body.match_count).toBe(5);
      seen.push(...body.matches.map((m: { id: string }) => m.id));
      cursor = body.matches_cursor;
      if (!body.matches_has_more) break;
    }
    expect(seen).toEqual(ids);
    const wrong = await app.inject({
      url: `/v1/alerts/deliveries/${byChannel.EMAIL}?matches_cursor=${encodeURIComponent(cursor ?? 'x')}`,
    });
    expect(wrong.statusCode).toBe(400);
    const tooMany = await app.inject({ url: `/v1/alerts/deliveries/${row!.id}?matches_limit=101` });
    expect(tooMany.statusCode).toBe(400);
  });

  it('rebuilds the exact bytes a webhook delivery POSTed, for members only', async () => {
    const posted = f.receiver.requests.find((r) => r.headers['webhook-id'] === byChannel.WEBHOOK)!;
    const response = await app.inject({
      url: `/v1/alerts/deliveries/${byChannel.WEBHOOK}/webhook-payload`,
      headers: member,
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    expect(sha(response.rawPayload)).toBe(sha(posted.body));

    expect(
      (await app.inject({ url: `/v1/alerts/deliveries/${byChannel.WEBHOOK}/webhook-payload` })).statusCode,
    ).toBe(403);
    expect(
      (
        await app.inject({
          url: `/v1/alerts/deliveries/${byChannel.WEBHOOK}/webhook-payload`,
          headers: { 'x-api-key': otherKey },
        })
      ).statusCode,
    ).toBe(403);
    expect(
      (await app.inject({ url: `/v1/alerts/deliveries/${byChannel.EMAIL}/webhook-payload`, headers: member }))
        .statusCode,
    ).toBe(404);
  });

  it('lists the deliveries of a match for GET /v1/alerts/matches/{id}', async () => {
    const deliveries = await deliveriesOfMatch(f.db, matchId);
    expect(deliveries.map((d) => d.channel).sort()).toEqual(['CHAT', 'EMAIL', 'WEBHOOK']);
    expect(deliveries[0]).toEqual({
      id: expect.any(String),
      channel: expect.any(String),
      status: 'SENT',
      created_at: expect.any(String),
      sent_at: expect.any(String),
    });
  });

  it("sends an alert.test body to the alert's webhooks at once and reports each", async () => {
    const before = f.receiver.requests.length;
    const response = await app.inject({
      method: 'POST',
      url: `/v1/alerts/${alertId}/test-webhook`,
      headers: member,
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().results).toEqual([
      {
        delivered: true,
        url: f.webhook.url,
        webhook_connection_id: f.webhook.id,
        duration_ms: expect.any(Number),
        status_code: 200,
        error: null,
      },
    ]);
    const posted = f.receiver.requests.slice(before);
    expect(posted).toHaveLength(1);
    expect(JSON.parse(posted[0]!.body.toString())).toMatchObject({
      type: 'alert.test',
      alert: { id: alertId },
      matches: [],
    });
    const other = await app.inject({
      method: 'POST',
      url: `/v1/alerts/${alertId}/test-webhook`,
      headers: { 'x-api-key': otherKey },
    });
    expect(other.statusCode).toBe(404);
  });

  it('test-webhook answers for an alert created a moment ago, before the alerts read model has it', async () => {
    for (let i = 0; i < 5; i++) {
      const created = (await f.alerts.create(f.caller, {
        title: `Fresh alert ${i}`,
        entities: [{ entity_type: 'PERSON', entity_id: ENTITY_ID }],
        notifications: [{ type: 'WEBHOOK', webhook_connection_id: f.webhook.id }],
      })) as { id: string };
      const response = await app.inject({
        method: 'POST',
        url: `/v1/alerts/${created.id}/test-webhook`,
        headers: member,
      });
      expect(response.statusCode).toBe(200);
      expect(response.json().results).toEqual([expect.objectContaining({ delivered: true })]);
    }
  });

  it('renders the landing page as HTML without scripts', async () => {
    const response = await app.inject({ url: `/alerts/deliveries/${byChannel.EMAIL}` });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['referrer-policy']).toBe('no-referrer');
    expect(response.body).toContain('<h1>Jensen on podcasts</h1>');
    expect(response.body).toContain('Our guest today is Jensen Huang.');
    expect(response.body).toContain('Very Popular');
    expect(response.body).not.toMatch(/<script/i);
    expect((await app.inject({ url: '/alerts/deliveries/nope' })).statusCode).toBe(404);
  });

  it('escapes what producers wrote', async () => {
    const alert = await f.createAlert({
      title: 'Evil <script>alert(1)</script>',
      notifications: [{ type: 'EMAIL', email: 'ops@example.com' }],
    });
    await f.match(alert.id, {
      episode: {
        podcast_id: 'p',
        podcast_title: '<img src=x onerror=alert(1)>',
        title: 'T',
        duration_seconds: 1,
        published_at: '2026-11-20T00:00:00Z',
        audio_url: 'javascript:alert(1)',
      },
    });
    await f.deliverAll();
    const [row] = await deliveryRows(f.db, alert.id);
    const page = (await app.inject({ url: `/alerts/deliveries/${row!.id}` })).body;
    expect(page).toContain('Evil &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(page).not.toContain('javascript:');
  });

  it('reads windows only for the views that show them, and quotes at most 800 characters of a line on the landing page', async () => {
    const alert = await f.createAlert({
      notifications: [{ type: 'WEBHOOK', webhook_connection_id: f.webhook.id }],
    });
    const long = `Jensen ${'a'.repeat(99_990)}`;
    const line = (number: number, text: string, isMention: boolean) => ({
      number,
      start_seconds: number,
      end_seconds: number + 1,
      text,
      is_mention: isMention,
    });
    const windows = [
      { start_seconds: 1, end_seconds: 3, lines: [line(1, 'context before', false), line(2, long, true)] },
      {
        start_seconds: 9,
        end_seconds: 11,
        lines: [line(9, 'Jensen again', true), line(10, 'context after', false)],
      },
    ];
    const match = await f.match(alert.id, { windows });
    await f.deliverAll();
    const [row] = await deliveryRows(f.db, alert.id);
    const read = (windows: 'all' | 'mentions' | 'none') =>
      deliveryMatches(f.db, [row!.id], { limit: 10, windows }).then((found) => found[0]!.data);

    expect((await read('all')).windows).toEqual(windows);
    expect(await read('none')).toEqual(
      Object.fromEntries(Object.entries(match).filter(([k]) => k !== 'windows')),
    );
    expect((await read('mentions')).windows).toEqual([
      { lines: [windows[0]!.lines[1], windows[1]!.lines[0]] },
    ]);

    const landing = (await app.inject({ url: `/alerts/deliveries/${row!.id}` })).body;
    expect(landing).toContain(`<q>${long.slice(0, 799)}…</q>`);
    expect(landing).toContain('<q>Jensen again</q>');
    expect(landing).not.toContain('context before');
    const detailed = await app.inject({
      url: `/v1/alerts/deliveries/${row!.id}?view=detailed`,
      headers: member,
    });
    expect(detailed.json().matches[0].windows[0].lines[1].text).toBe(long);
    const summary = await app.inject({ url: `/v1/alerts/deliveries/${row!.id}`, headers: member });
    expect(summary.json().matches[0]).not.toHaveProperty('windows');
    expect(summary.json().matches[0].mention_count).toBe(match.mentionCount);
  });
});
