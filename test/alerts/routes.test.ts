import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertStream, loadAlert } from '../../src/alerts/alert.ts';
import { createKey } from '../../src/platform/keys.ts';
import { createOrganization, createProject, verifyEmail } from '../../src/platform/organizations.ts';
import { alertBody, type HttpFixture, httpFixture } from './support.ts';

let f: HttpFixture;
beforeAll(async () => {
  f = await httpFixture();
});
afterAll(async () => {
  await f.close();
});

const post = (path: string, headers: Record<string, string>, payload: unknown) =>
  f.app.inject({ method: 'POST', url: path, headers, payload: payload as object });

async function createAlert(tenant = f.a, overrides: Record<string, unknown> = {}) {
  const response = await post(
    `/v1/projects/${tenant.project.id}/alerts`,
    tenant.headers,
    alertBody(overrides),
  );
  expect(response.statusCode).toBe(200);
  return response.json() as { id: string; [key: string]: unknown };
}

/** The footer token of `email` on an alert, derived as the email sender would. */
async function footerToken(alertId: string, email = 'ops@example.com') {
  const { state } = await loadAlert(f.store, alertId);
  if (state.status === 'initial') throw new Error('no alert');
  const token = state.alert.disableTokens[email]!;
  return f.capability.tokens.tokenFor(alertId, email, token.tokenId);
}

function expectProblem(
  response: { statusCode: number; headers: Record<string, unknown>; json(): unknown },
  status: number,
  errorCode: string,
) {
  expect(response.statusCode).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.json()).toMatchObject({ status, error_code: errorCode });
  return response.json() as {
    errors: { location: string }[] | null;
    resolve?: { message: string; action?: string };
  };
}

describe('POST /v1/projects/{projectId}/alerts', () => {
  it('creates an alert and answers 200 with it; GET by id returns the same', async () => {
    const created = await createAlert(f.a, {
      kind: 'PODCAST_SPEAKER',
      delivery_cadence: 'daily',
      filters: { speaker_roles: ['guest'], languages: ['EN'] },
    });
    expect(created).toMatchObject({
      project_id: f.a.project.id,
      organization_id: f.a.organization.id,
      kind: 'PODCAST_SPEAKER',
      delivery_cadence: 'DAILY',
      filters: { speaker_roles: ['GUEST'], languages: ['en'] },
      is_active: true,
      status: 'active',
    });
    const fetched = await f.app.inject({ url: `/v1/alerts/${created.id}`, headers: f.a.headers });
    expect(fetched.statusCode).toBe(200);
    expect(fetched.json()).toEqual(created);
  });

  it('needs a key: 401 without one', async () => {
    const response = await post(`/v1/projects/${f.a.project.id}/alerts`, {}, alertBody());
    expectProblem(response, 401, 'unauthorized');
  });

  it.each([
    [
      'two entities',
      {
        entities: [
          { entity_type: 'PERSON', entity_id: 'a' },
          { entity_type: 'PERSON', entity_id: 'b' },
        ],
      },
      'invalid_parameter',
      '/entities',
    ],
    ['no entity', { entities: [] }, 'invalid_parameter', '/entities'],
    ['no notifications', { notifications: [] }, 'validation_failed', '/notifications'],
    [
      '21 notifications',
      {
        notifications: Array.from({ length: 21 }, (_, i) => ({ type: 'EMAIL', email: `u${i}@example.com` })),
      },
      'validation_failed',
      '/notifications',
    ],
    [
      'a malformed channel',
      { notifications: [{ type: 'CHAT', chat_connection_id: 'c' }] },
      'validation_failed',
      '/notifications/0/chat_channel_id',
    ],
    [
      'a HOST speaker role',
      { kind: 'PODCAST_SPEAKER', filters: { speaker_roles: ['CO_HOST'] } },
      'validation_failed',
      '/filters/speaker_roles/0',
    ],
    [
      'an unknown language',
      { filters: { languages: ['english'] } },
      'validation_failed',
      '/filters/languages/0',
    ],
    [
      'speaker_roles on ENTITY_MENTION',
      { filters: { speaker_roles: ['GUEST'] } },
      'speaker_roles_not_allowed',
      '/filters/speaker_roles',
    ],
    [
      'an unverified email',
      { notifications: [{ type: 'EMAIL', email: 'who@example.com' }] },
      'email_not_verified',
      '/notifications/0/email',
    ],
    [
      'an unknown entity',
      { entities: [{ entity_type: 'COMPANY', entity_id: 'nobody' }] },
      'unresolved_reference',
      '/entities/0/entity_id',
    ],
    [
      'an unknown webhook connection',
      { notifications: [{ type: 'WEBHOOK', webhook_connection_id: 'nope' }] },
      'connection_unavailable',
      '/notifications/0/webhook_connection_id',
    ],
    [
      'an unknown chat connection',
      { notifications: [{ type: 'CHAT', chat_connection_id: 'nope', chat_channel_id: 'C1' }] },
      'connection_unavailable',
      '/notifications/0/chat_connection_id',
    ],
    ['a title of the wrong type', { title: 5 }, 'validation_failed', '/title'],
  ])('answers 422 for %s', async (_name, overrides, errorCode, location) => {
    const response = await post(`/v1/projects/${f.a.project.id}/alerts`, f.a.headers, alertBody(overrides));
    const problem = expectProblem(response, 422, errorCode);
    expect(problem.errors?.map((e) => e.location)).toContain(location);
  });

  it('answers 402 plan_does_not_support_alerts with resolve on STARTER', async () => {
    const org = await createOrganization(f.db, { name: 'Small', plan: 'STARTER' });
    const project = await createProject(f.db, { organizationId: org.id, name: 'P' });
    const key = await createKey(f.db, { kind: 'project', projectId: project.id });
    const response = await post(`/v1/projects/${project.id}/alerts`, { 'x-api-key': key.key }, alertBody());
    const problem = expectProblem(response, 402, 'plan_does_not_support_alerts');
    expect(problem.resolve?.message).toMatch(/TEAM/);
  });

  it('answers 402 add_on_required with resolve past the active allowance, and a paused alert still fits', async () => {
    const org = await createOrganization(f.db, { name: 'Busy', plan: 'TEAM' });
    const project = await createProject(f.db, { organizationId: org.id, name: 'P' });
    await verifyEmail(f.db, org.id, 'ops@example.com');
    const headers = { 'x-api-key': (await createKey(f.db, { kind: 'project', projectId: project.id })).key };
    for (let i = 0; i < 10; i++)
      expect((await post(`/v1/projects/${project.id}/alerts`, headers, alertBody())).statusCode).toBe(200);
    const problem = expectProblem(
      await post(`/v1/projects/${project.id}/alerts`, headers, alertBody()),
      402,
      'add_on_required',
    );
    expect(problem.resolve).toMatchObject({
      message: expect.stringContaining('Alerts Pack'),
      action: expect.stringContaining(org.id),
    });
    const paused = await post(`/v1/projects/${project.id}/alerts`, headers, alertBody({ is_active: false }));
    expect(paused.statusCode).toBe(200);
    expectProblem(
      await f.app.inject({
        method: 'PATCH',
        url: `/v1/alerts/${paused.json().id}`,
        headers,
        payload: { is_active: true },
      }),
      402,
      'add_on_required',
    );
  });
});

describe('GET /v1/projects/{projectId}/alerts', () => {
  it('pages through the project’s alerts newest first with an opaque cursor', async () => {
    const org = await createOrganization(f.db, { name: 'Lister', plan: 'BUSINESS' });
    const project = await createProject(f.db, { organizationId: org.id, name: 'P' });
    await verifyEmail(f.db, org.id, 'ops@example.com');
    const headers = { 'x-api-key': (await createKey(f.db, { kind: 'project', projectId: project.id })).key };
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(
        (await post(`/v1/projects/${project.id}/alerts`, headers, alertBody({ title: `t${i}` }))).json().id,
      );
    await f.app.inject({ method: 'DELETE', url: `/v1/alerts/${ids[2]}`, headers });
    await f.project();
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const response = await f.app.inject({
        url: `/v1/projects/${project.id}/alerts`,
        query: { limit: '2', ...(cursor ? { cursor } : {}) },
        headers,
      });
      expect(response.statusCode).toBe(200);
      const page = response.json() as { data: { id: string }[]; has_more: boolean; cursor?: string };
      seen.push(...page.data.map((a) => a.id));
      cursor = page.has_more ? page.cursor : undefined;
    } while (cursor);
    expect(seen).toEqual([ids[4], ids[3], ids[1], ids[0]]);
  });

  it('rejects a cursor issued for another project, and an altered one, with 400', async () => {
    await createAlert(f.b);
    await createAlert(f.b);
    await f.project();
    const page = (
      await f.app.inject({
        url: `/v1/projects/${f.b.project.id}/alerts`,
        query: { limit: '1' },
        headers: f.b.headers,
      })
    ).json();
    expect(page.cursor).toBeDefined();
    // Same key's project? No: a cursor of B's list replayed on A's list.
    const foreign = await f.app.inject({
      url: `/v1/projects/${f.a.project.id}/alerts`,
      query: { cursor: page.cursor },
      headers: f.a.headers,
    });
    expectProblem(foreign, 400, 'invalid_cursor');
    const altered = await f.app.inject({
      url: `/v1/projects/${f.b.project.id}/alerts`,
      query: { cursor: `x${page.cursor}` },
      headers: f.b.headers,
    });
    expectProblem(altered, 400, 'invalid_cursor');
    expectProblem(
      await f.app.inject({
        url: `/v1/projects/${f.a.project.id}/alerts`,
        query: { limit: '101' },
        headers: f.a.headers,
      }),
      400,
      'invalid_parameter',
    );
  });
});

describe('PATCH and DELETE /v1/alerts/{id}', () => {
  it('updates, replaces filters, clears them with {}, pauses and resumes', async () => {
    const alert = await createAlert(f.a, { filters: { languages: ['en'], relevance: 'RELEVANT' } });
    const patch = (payload: object) =>
      f.app.inject({ method: 'PATCH', url: `/v1/alerts/${alert.id}`, headers: f.a.headers, payload });
    const replaced = await patch({ title: 'Renamed', filters: { source_popularity: ['POPULAR'] } });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json()).toMatchObject({ title: 'Renamed', filters: { source_popularity: ['POPULAR'] } });
    expect(replaced.json().filters).toEqual({ source_popularity: ['POPULAR'] });
    expect((await patch({ filters: {} })).json().filters).toEqual({});
    const paused = await patch({ is_active: false });
    expect(paused.json()).toMatchObject({ is_active: false, status: 'paused' });
    const resumed = await patch({ is_active: true });
    expect(resumed.json()).toMatchObject({ is_active: true, status: 'active' });
    expectProblem(await patch({ kind: 'PODCAST_SPEAKER' }), 422, 'kind_immutable');
    expectProblem(
      await patch({
        entities: [
          { entity_type: 'PERSON', entity_id: 'x' },
          { entity_type: 'PERSON', entity_id: 'y' },
        ],
      }),
      422,
      'invalid_parameter',
    );
    expectProblem(await patch({ colour: 'red' }), 422, 'validation_failed');
  });

  it('soft-deletes with 204; the alert is then 404 and its events remain', async () => {
    const alert = await createAlert();
    const deleted = await f.app.inject({
      method: 'DELETE',
      url: `/v1/alerts/${alert.id}`,
      headers: f.a.headers,
    });
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    expectProblem(
      await f.app.inject({ url: `/v1/alerts/${alert.id}`, headers: f.a.headers }),
      404,
      'alert_not_found',
    );
    expectProblem(
      await f.app.inject({ method: 'DELETE', url: `/v1/alerts/${alert.id}`, headers: f.a.headers }),
      404,
      'alert_not_found',
    );
    expectProblem(
      await f.app.inject({
        method: 'PATCH',
        url: `/v1/alerts/${alert.id}`,
        headers: f.a.headers,
        payload: { title: 'x' },
      }),
      404,
      'alert_not_found',
    );
    expect((await f.store.readStream(alertStream(alert.id))).map((e) => e.type)).toEqual([
      'AlertCreated',
      'AlertDeleted',
    ]);
  });

  it('answers 404 for an id that never existed', async () => {
    expectProblem(
      await f.app.inject({ url: '/v1/alerts/doesnotexist', headers: f.a.headers }),
      404,
      'alert_not_found',
    );
    // Ids shaped like another stream's name find nothing either (never that stream's events).
    await createAlert();
    for (const id of [`quota-${f.a.organization.id}`, 'quota-x'])
      expectProblem(
        await f.app.inject({ url: `/v1/alerts/${id}`, headers: f.a.headers }),
        404,
        'alert_not_found',
      );
  });
});

describe('the disable link (public)', () => {
  it('shows what a token disables, disables it with the RFC 8058 one-click POST, and repeats harmlessly', async () => {
    const alert = await createAlert();
    await f.project();
    const token = await footerToken(alert.id);
    const view = await f.app.inject({ url: '/v1/alerts/disable', query: { token } });
    expect(view.statusCode).toBe(200);
    expect(view.json()).toEqual({
      alert: { id: alert.id, title: 'Jensen on podcasts', kind: 'ENTITY_MENTION' },
      email: 'ops@example.com',
      status: 'active',
      is_active: true,
    });
    const click = () =>
      f.app.inject({
        method: 'POST',
        url: `/v1/alerts/disable?token=${encodeURIComponent(token)}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'List-Unsubscribe=One-Click',
      });
    const first = await click();
    expect(first.statusCode).toBe(200);
    expect(first.headers.location).toBeUndefined();
    expect(first.json()).toMatchObject({ status: 'disabled', is_active: false });
    expect((await click()).json()).toMatchObject({ status: 'disabled' });
    // RFC 8058 prefers multipart/form-data for the one-click POST.
    const boundary = 'earshot-boundary';
    const multipart = await f.app.inject({
      method: 'POST',
      url: `/v1/alerts/disable?token=${encodeURIComponent(token)}`,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: `--${boundary}\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--${boundary}--\r\n`,
    });
    expect(multipart.statusCode).toBe(200);
    expect(multipart.json()).toMatchObject({ status: 'disabled' });
    const events = await f.store.readStream(alertStream(alert.id));
    expect(events.filter((e) => e.type === 'AlertDisabledByRecipient')).toHaveLength(1);

    const owner = await f.app.inject({ url: `/v1/alerts/${alert.id}`, headers: f.a.headers });
    expect(owner.json()).toMatchObject({
      status: 'disabled',
      is_active: false,
      disabled_at: expect.any(String),
    });
    const resumed = await f.app.inject({
      method: 'PATCH',
      url: `/v1/alerts/${alert.id}`,
      headers: f.a.headers,
      payload: { is_active: true },
    });
    expect(resumed.json()).toMatchObject({ status: 'active' });
  });

  it('accepts the token in a JSON body and ignores any presented key', async () => {
    const alert = await createAlert();
    await f.project();
    const token = await footerToken(alert.id);
    const response = await f.app.inject({
      method: 'POST',
      url: '/v1/alerts/disable',
      headers: { 'x-api-key': 'ek_garbage' },
      payload: { token },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ status: 'disabled' });
  });

  it('answers a malformed or missing token with 400 and an unknown one with 404, never 500', async () => {
    expectProblem(
      await f.app.inject({ url: '/v1/alerts/disable', query: { token: 'short' } }),
      400,
      'invalid_token',
    );
    expectProblem(await f.app.inject({ url: '/v1/alerts/disable' }), 400, 'invalid_token');
    expectProblem(await f.app.inject({ method: 'POST', url: '/v1/alerts/disable' }), 400, 'invalid_token');
    const unknown = 'A'.repeat(43);
    expectProblem(
      await f.app.inject({ url: '/v1/alerts/disable', query: { token: unknown } }),
      404,
      'disable_token_not_found',
    );
    expectProblem(
      await f.app.inject({ method: 'POST', url: '/v1/alerts/disable', query: { token: unknown } }),
      404,
      'disable_token_not_found',
    );
  });

  it('stops honouring the token of a recipient who was removed', async () => {
    await verifyEmail(f.db, f.a.organization.id, 'other@example.com');
    const alert = await createAlert();
    await f.project();
    const token = await footerToken(alert.id);
    await f.app.inject({
      method: 'PATCH',
      url: `/v1/alerts/${alert.id}`,
      headers: f.a.headers,
      payload: { notifications: [{ type: 'EMAIL', email: 'other@example.com' }] },
    });
    await f.project();
    expectProblem(
      await f.app.inject({ method: 'POST', url: '/v1/alerts/disable', query: { token } }),
      404,
      'disable_token_not_found',
    );
  });
});

describe('project isolation for alerts', () => {
  it("gives A's key 403 on B's project paths and 404 on B's alerts by id", async () => {
    const theirs = await createAlert(f.b);
    expectProblem(
      await post(`/v1/projects/${f.b.project.id}/alerts`, f.a.headers, alertBody()),
      403,
      'project_forbidden',
    );
    expectProblem(
      await f.app.inject({ url: `/v1/projects/${f.b.project.id}/alerts`, headers: f.a.headers }),
      403,
      'project_forbidden',
    );
    expectProblem(
      await f.app.inject({ url: `/v1/alerts/${theirs.id}`, headers: f.a.headers }),
      404,
      'alert_not_found',
    );
    expectProblem(
      await f.app.inject({
        method: 'PATCH',
        url: `/v1/alerts/${theirs.id}`,
        headers: f.a.headers,
        payload: { is_active: false },
      }),
      404,
      'alert_not_found',
    );
    expectProblem(
      await f.app.inject({ method: 'DELETE', url: `/v1/alerts/${theirs.id}`, headers: f.a.headers }),
      404,
      'alert_not_found',
    );
    // And B's alert is untouched.
    expect(
      (await f.app.inject({ url: `/v1/alerts/${theirs.id}`, headers: f.b.headers })).json(),
    ).toMatchObject({ status: 'active' });
  });
});

describe('the OpenAPI document', () => {
  it('describes every alert route', async () => {
    const spec = (await f.app.inject({ url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(spec.paths['/v1/projects/{projectId}/alerts'] ?? {})).toEqual(
      expect.arrayContaining(['post', 'get']),
    );
    expect(Object.keys(spec.paths['/v1/alerts/{id}'] ?? {})).toEqual(
      expect.arrayContaining(['get', 'patch', 'delete']),
    );
    expect(Object.keys(spec.paths['/v1/alerts/disable'] ?? {})).toEqual(
      expect.arrayContaining(['get', 'post']),
    );
  });
});
