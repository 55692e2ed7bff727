import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addChatConnection, chatDestination, TOKEN_PURPOSE } from '../../src/chat/connections.ts';
import { createSecretBox } from '../../src/crypto/secret-box.ts';
import { NotFoundError } from '../../src/errors.ts';
import { SECRET_PURPOSE, webhookDestination } from '../../src/webhooks/connections.ts';
import { type HttpFixture, httpFixture } from './support.ts';

const CHANNELS = Array.from({ length: 5 }, (_, i) => ({ id: `C${i}`, name: `channel-${i}` }));
const GOOD_TOKEN = 'xoxb-good';
// A public address literal, so the URL rule needs no DNS.
const PUBLIC_URL = 'https://93.184.216.34/hooks/earshot';

let f: HttpFixture;
beforeAll(async () => {
  f = await httpFixture({
    // The chat sender's listChannels is injected; this stand-in answers like Slack for one token.
    listChannels: async ({ botToken }) => {
      if (botToken !== GOOD_TOKEN) throw new Error('invalid_auth');
      return CHANNELS;
    },
  });
});
afterAll(async () => {
  await f.close();
});

const problem = (
  response: { statusCode: number; headers: Record<string, unknown>; json(): unknown },
  status: number,
  errorCode: string,
) => {
  expect(response.statusCode).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.json()).toMatchObject({ status, error_code: errorCode });
};

const webhooks = (projectId: string) => `/v1/projects/${projectId}/webhooks/connections`;
const chats = (projectId: string) => `/v1/projects/${projectId}/chat/connections`;
const deps = () => ({ db: f.db, box: f.capability.box, now: () => new Date() });

async function createWebhook(tenant = f.a, body: object = { url: PUBLIC_URL, name: 'Ops' }) {
  const response = await f.app.inject({
    method: 'POST',
    url: webhooks(tenant.project.id),
    headers: tenant.headers,
    payload: body,
  });
  expect(response.statusCode).toBe(200);
  return response.json() as { id: string; secret: string; secret_prefix: string };
}

describe('webhook connections', () => {
  it('creates one with a whsec_ secret shown once, stored sealed', async () => {
    const created = await createWebhook();
    expect(created).toMatchObject({
      project_id: f.a.project.id,
      url: PUBLIC_URL,
      surface: 'PLATFORM',
      name: 'Ops',
      created_by: null,
      created_at: expect.any(String),
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(32);
    expect(created.secret_prefix).toBe(created.secret.slice(0, 12));
    const { rows } = await f.db.query<{ secret_sealed: string }>(
      'select secret_sealed from webhook_connections where id = $1',
      [created.id],
    );
    expect(rows[0]!.secret_sealed).not.toContain(created.secret.slice(6));
    expect((await webhookDestination(deps(), created.id))?.secret).toBe(created.secret);

    const fetched = await f.app.inject({
      url: `${webhooks(f.a.project.id)}/${created.id}`,
      headers: f.a.headers,
    });
    expect(fetched.statusCode).toBe(200);
    expect(fetched.json().secret).toBeUndefined();
    expect(fetched.json().secret_prefix).toBe(created.secret_prefix);
  });

  it.each([
    ['http', 'http://93.184.216.34/x'],
    ['loopback', 'https://127.0.0.1/x'],
    ['private', 'https://10.1.2.3/x'],
    ['CGNAT', 'https://100.64.0.1/x'],
    ['IPv6 ULA', 'https://[fd00::1]/x'],
    ['credentials', 'https://user:pw@93.184.216.34/x'],
    ['not a URL', 'not a url'],
  ])('refuses a %s URL with 422 invalid_webhook_url', async (_name, url) => {
    const response = await f.app.inject({
      method: 'POST',
      url: webhooks(f.a.project.id),
      headers: f.a.headers,
      payload: { url },
    });
    problem(response, 422, 'invalid_webhook_url');
    expect(response.json().errors[0].location).toBe('/url');
  });

  it('refuses a body without url with 422', async () => {
    problem(
      await f.app.inject({
        method: 'POST',
        url: webhooks(f.a.project.id),
        headers: f.a.headers,
        payload: {},
      }),
      422,
      'validation_failed',
    );
  });

  it('rotates the secret: the new one is returned once and replaces the old at once', async () => {
    const created = await createWebhook();
    const rotated = await f.app.inject({
      method: 'POST',
      url: `${webhooks(f.a.project.id)}/${created.id}/secret/rotate`,
      headers: f.a.headers,
    });
    expect(rotated.statusCode).toBe(200);
    const body = rotated.json();
    expect(body.secret).toMatch(/^whsec_/);
    expect(body.secret).not.toBe(created.secret);
    expect(body.secret_prefix).toBe(body.secret.slice(0, 12));
    expect((await webhookDestination(deps(), created.id))?.secret).toBe(body.secret);
  });

  it('revokes on DELETE, stays readable with revoked_at, and cannot be rotated any more', async () => {
    const created = await createWebhook();
    const revoked = await f.app.inject({
      method: 'DELETE',
      url: `${webhooks(f.a.project.id)}/${created.id}`,
      headers: f.a.headers,
    });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().revoked_at).toEqual(expect.any(String));
    const again = await f.app.inject({
      method: 'DELETE',
      url: `${webhooks(f.a.project.id)}/${created.id}`,
      headers: f.a.headers,
    });
    expect(again.json().revoked_at).toBe(revoked.json().revoked_at);
    const fetched = await f.app.inject({
      url: `${webhooks(f.a.project.id)}/${created.id}`,
      headers: f.a.headers,
    });
    expect(fetched.json().revoked_at).toBe(revoked.json().revoked_at);
    problem(
      await f.app.inject({
        method: 'POST',
        url: `${webhooks(f.a.project.id)}/${created.id}/secret/rotate`,
        headers: f.a.headers,
      }),
      409,
      'webhook_connection_revoked',
    );
  });

  it('lists a project’s connections newest first in pages', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await createWebhook(f.b)).id);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = (
        await f.app.inject({
          url: webhooks(f.b.project.id),
          query: { limit: '2', ...(cursor ? { cursor } : {}) },
          headers: f.b.headers,
        })
      ).json();
      expect(page.data.every((c: { secret?: string }) => c.secret === undefined)).toBe(true);
      seen.push(...page.data.map((c: { id: string }) => c.id));
      cursor = page.has_more ? page.cursor : undefined;
    } while (cursor);
    expect(seen.slice(0, 3)).toEqual([...ids].reverse());
  });

  it('answers 404 for an unknown id', async () => {
    problem(
      await f.app.inject({ url: `${webhooks(f.a.project.id)}/nope`, headers: f.a.headers }),
      404,
      'webhook_connection_not_found',
    );
    problem(
      await f.app.inject({ method: 'DELETE', url: `${webhooks(f.a.project.id)}/nope`, headers: f.a.headers }),
      404,
      'webhook_connection_not_found',
    );
    problem(
      await f.app.inject({
        method: 'POST',
        url: `${webhooks(f.a.project.id)}/nope/secret/rotate`,
        headers: f.a.headers,
      }),
      404,
      'webhook_connection_not_found',
    );
  });
});

describe('chat connections', () => {
  it('connects a workspace from the CLI with the token sealed, and installing again keeps the id', async () => {
    const added = await addChatConnection(deps(), {
      projectId: f.a.project.id,
      teamId: 'T1',
      teamName: 'Acme',
      botToken: 'xoxb-old',
    });
    const again = await addChatConnection(deps(), {
      projectId: f.a.project.id,
      teamId: 'T1',
      teamName: 'Acme Inc',
      botToken: GOOD_TOKEN,
    });
    expect(again.id).toBe(added.id);
    expect(again.team_name).toBe('Acme Inc');
    expect((await chatDestination(deps(), added.id))?.botToken).toBe(GOOD_TOKEN);
    const { rows } = await f.db.query<{ bot_token_sealed: string }>(
      'select bot_token_sealed from chat_connections where id = $1',
      [added.id],
    );
    expect(rows[0]!.bot_token_sealed).not.toContain('xoxb');
    await expect(
      addChatConnection(deps(), { projectId: 'nope', teamId: 'T', teamName: 'N', botToken: 'xoxb-1' }),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      addChatConnection(deps(), {
        projectId: f.a.project.id,
        teamId: ' ',
        teamName: 'N',
        botToken: 'xoxb-1',
      }),
    ).rejects.toMatchObject({ errorCode: 'invalid_parameter' });
  });

  it('lists connections without tokens, lists channels in pages, and soft-deletes', async () => {
    const connection = await addChatConnection(deps(), {
      projectId: f.b.project.id,
      teamId: 'T9',
      teamName: 'Beta',
      botToken: GOOD_TOKEN,
    });
    const list = await f.app.inject({ url: chats(f.b.project.id), headers: f.b.headers });
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({
      data: [expect.objectContaining({ id: connection.id, team_id: 'T9', team_name: 'Beta' })],
      has_more: false,
    });
    expect(JSON.stringify(list.json())).not.toContain('xoxb');

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const response = await f.app.inject({
        url: `${chats(f.b.project.id)}/${connection.id}/channels`,
        query: { limit: '2', ...(cursor ? { cursor } : {}) },
        headers: f.b.headers,
      });
      expect(response.statusCode).toBe(200);
      const page = response.json();
      seen.push(...page.data.map((c: { id: string }) => c.id));
      cursor = page.has_more ? page.cursor : undefined;
    } while (cursor);
    expect(seen).toEqual(CHANNELS.map((c) => c.id));

    const deleted = await f.app.inject({
      method: 'DELETE',
      url: `${chats(f.b.project.id)}/${connection.id}`,
      headers: f.b.headers,
    });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json().deleted_at).toEqual(expect.any(String));
    expect((await f.app.inject({ url: chats(f.b.project.id), headers: f.b.headers })).json().data).toEqual(
      [],
    );
    problem(
      await f.app.inject({ url: `${chats(f.b.project.id)}/${connection.id}/channels`, headers: f.b.headers }),
      404,
      'chat_connection_not_found',
    );
    problem(
      await f.app.inject({
        method: 'DELETE',
        url: `${chats(f.b.project.id)}/${connection.id}`,
        headers: f.b.headers,
      }),
      404,
      'chat_connection_not_found',
    );
  });

  it('answers 502 chat_provider_error when the workspace refuses to list channels', async () => {
    const connection = await addChatConnection(deps(), {
      projectId: f.a.project.id,
      teamId: 'T2',
      teamName: 'Revoked',
      botToken: 'xoxb-revoked',
    });
    const response = await f.app.inject({
      url: `${chats(f.a.project.id)}/${connection.id}/channels`,
      headers: f.a.headers,
    });
    problem(response, 502, 'chat_provider_error');
    expect(response.json().detail).toContain('invalid_auth');
  });
});

describe('project isolation for connections', () => {
  it("gives A's key 403 on every path of B's project and 404 for B's connection under A's path", async () => {
    const theirWebhook = await createWebhook(f.b);
    const theirChat = await addChatConnection(deps(), {
      projectId: f.b.project.id,
      teamId: 'TB',
      teamName: 'B',
      botToken: GOOD_TOKEN,
    });
    const b = f.b.project.id;
    const forbidden = [
      { method: 'POST' as const, url: webhooks(b), payload: { url: PUBLIC_URL } },
      { method: 'GET' as const, url: webhooks(b) },
      { method: 'GET' as const, url: `${webhooks(b)}/${theirWebhook.id}` },
      { method: 'DELETE' as const, url: `${webhooks(b)}/${theirWebhook.id}` },
      { method: 'POST' as const, url: `${webhooks(b)}/${theirWebhook.id}/secret/rotate` },
      { method: 'GET' as const, url: chats(b) },
      { method: 'GET' as const, url: `${chats(b)}/${theirChat.id}/channels` },
      { method: 'DELETE' as const, url: `${chats(b)}/${theirChat.id}` },
    ];
    for (const request of forbidden)
      problem(await f.app.inject({ ...request, headers: f.a.headers }), 403, 'project_forbidden');

    const a = f.a.project.id;
    problem(
      await f.app.inject({ url: `${webhooks(a)}/${theirWebhook.id}`, headers: f.a.headers }),
      404,
      'webhook_connection_not_found',
    );
    problem(
      await f.app.inject({
        method: 'DELETE',
        url: `${webhooks(a)}/${theirWebhook.id}`,
        headers: f.a.headers,
      }),
      404,
      'webhook_connection_not_found',
    );
    problem(
      await f.app.inject({
        method: 'POST',
        url: `${webhooks(a)}/${theirWebhook.id}/secret/rotate`,
        headers: f.a.headers,
      }),
      404,
      'webhook_connection_not_found',
    );
    problem(
      await f.app.inject({ url: `${chats(a)}/${theirChat.id}/channels`, headers: f.a.headers }),
      404,
      'chat_connection_not_found',
    );
    problem(
      await f.app.inject({ method: 'DELETE', url: `${chats(a)}/${theirChat.id}`, headers: f.a.headers }),
      404,
      'chat_connection_not_found',
    );

    // An alert of A cannot name B's connections.
    const alert = await f.app.inject({
      method: 'POST',
      url: `/v1/projects/${a}/alerts`,
      headers: f.a.headers,
      payload: {
        title: 't',
        entities: [{ entity_type: 'PERSON', entity_id: 'ent-jensen' }],
        notifications: [
          { type: 'WEBHOOK', webhook_connection_id: theirWebhook.id },
          { type: 'CHAT', chat_connection_id: theirChat.id, chat_channel_id: 'C1' },
        ],
      },
    });
    problem(alert, 422, 'connection_unavailable');
    // B's connection is untouched.
    expect(
      (await f.app.inject({ url: `${webhooks(b)}/${theirWebhook.id}`, headers: f.b.headers })).json()
        .revoked_at,
    ).toBeUndefined();
  });
});

describe('a connection secret the configured key cannot open', () => {
  // What a secret looks like after EARSHOT_SECRET_KEY changed without the old key kept.
  const otherBox = createSecretBox(randomBytes(32));

  it('answers 409 connection_secret_unreadable when listing a chat connection’s channels', async () => {
    const connection = await addChatConnection(deps(), {
      projectId: f.a.project.id,
      teamId: 'T-unreadable',
      teamName: 'Old key',
      botToken: GOOD_TOKEN,
    });
    await f.db.query('update chat_connections set bot_token_sealed = $2 where id = $1', [
      connection.id,
      otherBox.seal(GOOD_TOKEN, TOKEN_PURPOSE),
    ]);
    const response = await f.app.inject({
      url: `${chats(f.a.project.id)}/${connection.id}/channels`,
      headers: f.a.headers,
    });
    problem(response, 409, 'connection_secret_unreadable');
    expect(response.json().detail).toContain(`chat connection ${connection.id}`);
    expect(response.json().errors).toEqual([
      { location: 'path.id', message: expect.any(String), value: connection.id },
    ]);

    // Connecting the workspace again seals a token under the current key: the listing works again.
    await addChatConnection(deps(), {
      projectId: f.a.project.id,
      teamId: 'T-unreadable',
      teamName: 'Old key',
      botToken: GOOD_TOKEN,
    });
    const repaired = await f.app.inject({
      url: `${chats(f.a.project.id)}/${connection.id}/channels`,
      headers: f.a.headers,
    });
    expect(repaired.statusCode).toBe(200);
  });

  it('rotates a webhook secret that cannot be opened, since rotating never opens the old one', async () => {
    const created = await createWebhook();
    await f.db.query('update webhook_connections set secret_sealed = $2 where id = $1', [
      created.id,
      otherBox.seal(created.secret, SECRET_PURPOSE),
    ]);
    const rotated = await f.app.inject({
      method: 'POST',
      url: `${webhooks(f.a.project.id)}/${created.id}/secret/rotate`,
      headers: f.a.headers,
    });
    expect(rotated.statusCode).toBe(200);
    expect((await webhookDestination(deps(), created.id))?.secret).toBe(rotated.json().secret);
  });
});
