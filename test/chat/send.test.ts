import { createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildChatMessage } from '../../src/chat/blocks.ts';
import { postChatMessage } from '../../src/chat/send.ts';
import type { AlertNotice } from '../../src/email/notice.ts';
import { type SlackStandin, startSlackStandin } from '../support/slack-standin.ts';

const BASE = 'https://earshot.example.com';
const TOKEN = 'xoxb-test-token';

const notice: AlertNotice = {
  kind: 'realtime',
  deliveryId: 'dlv_chat1',
  alert: { id: 'alr_1', title: 'Acme mentions' },
  matchCount: 1,
  matches: [
    {
      matchId: 'mat_1',
      episodeTitle: 'The Acme episode',
      podcastTitle: 'Tech Weekly',
      mentionCount: 3,
      lines: [{ text: 'Acme is everywhere.', speaker: 'Host', startSeconds: 12 }],
    },
  ],
};

let slack: SlackStandin;

beforeAll(async () => {
  slack = await startSlackStandin({
    tokens: [TOKEN],
    channels: [
      { id: 'C0ALERTS', name: 'alerts' },
      { id: 'C0NOTMEMBER', name: 'elsewhere', is_member: false },
    ],
  });
});
afterAll(() => slack.close());
beforeEach(() => {
  slack.calls.length = 0;
  slack.posted.length = 0;
});

const post = (channel = 'C0ALERTS', token = TOKEN, n: AlertNotice = notice) =>
  postChatMessage(
    { token, channel, notice: n, publicBaseUrl: BASE },
    { slackApiUrl: slack.url, timeoutMs: 5_000 },
  );

describe('posting an alert to a chat channel', () => {
  it('posts the Block Kit message with chat.postMessage using the bot token', async () => {
    const outcome = await post();
    expect(outcome).toMatchObject({ ok: true, retryable: false });
    expect(outcome.ts).toBe(slack.posted[0]?.ts);
    expect(slack.calls).toHaveLength(1);
    expect(slack.calls[0]).toMatchObject({ method: 'chat.postMessage', token: TOKEN });
    const expected = buildChatMessage(notice, BASE);
    expect(slack.posted[0]).toMatchObject({
      channel: 'C0ALERTS',
      text: expected.text,
      blocks: expected.blocks,
    });
  });

  it('escapes caller text in the top-level fallback text, so a title cannot ping the channel or forge a link', async () => {
    const hostile = '<!here> <https://evil.test|click> & co';
    const forged: AlertNotice = {
      ...notice,
      alert: { id: 'alr_1', title: `Alert ${hostile}` },
      matches: [
        { ...notice.matches[0]!, episodeTitle: `Episode ${hostile}`, podcastTitle: `Pod ${hostile}` },
      ],
    };
    for (const n of [{ ...forged, kind: 'test' as const }, forged]) {
      slack.posted.length = 0;
      expect(await post('C0ALERTS', TOKEN, n)).toMatchObject({ ok: true });
      const text = slack.posted[0]!.text!;
      expect(text).not.toMatch(/[<>]|&(?!amp;|lt;|gt;)/);
      expect(text).toContain('Alert &lt;!here&gt; &lt;https://evil.test|click&gt; &amp; co');
    }
    expect(slack.posted[0]!.text).toContain('Pod &lt;!here&gt;');
  });

  it('gets the largest digest accepted by the stand-in, which enforces Slack limits', async () => {
    const digest: AlertNotice = {
      ...notice,
      kind: 'digest',
      cadence: 'DAILY',
      matchCount: 500,
      matches: Array.from({ length: 100 }, (_, i) => ({
        ...notice.matches[0]!,
        matchId: `mat_${i}`,
        lines: Array.from({ length: 20 }, () => ({ text: 'Acme '.repeat(200), speaker: 'Host' })),
      })),
    };
    const outcome = await post('C0ALERTS', TOKEN, digest);
    expect(outcome).toMatchObject({ ok: true });
    expect(slack.posted[0]?.blocks?.length).toBeLessThanOrEqual(50);
  });

  it('turns a 429 into a retryable outcome with Retry-After, without retrying itself', async () => {
    slack.script('chat.postMessage', { status: 429, retryAfter: 30 });
    const outcome = await post();
    expect(outcome).toMatchObject({ ok: false, retryable: true, retryAfterMs: 30_000, code: 'ratelimited' });
    expect(slack.calls).toHaveLength(1);
    expect(slack.posted).toHaveLength(0);
  });

  it('treats a 429 without Retry-After as retryable with no delay hint', async () => {
    slack.script('chat.postMessage', { status: 429 });
    const outcome = await post();
    expect(outcome).toMatchObject({ ok: false, retryable: true });
    expect(outcome.retryAfterMs).toBeUndefined();
    expect(slack.calls).toHaveLength(1);
  });

  it('reports channel_not_found as permanent', async () => {
    expect(await post('C0MISSING')).toMatchObject({ ok: false, code: 'channel_not_found', retryable: false });
  });

  it('reports not_in_channel as permanent', async () => {
    expect(await post('C0NOTMEMBER')).toMatchObject({ ok: false, code: 'not_in_channel', retryable: false });
  });

  it('reports invalid_auth as permanent', async () => {
    expect(await post('C0ALERTS', 'xoxb-revoked')).toMatchObject({
      ok: false,
      code: 'invalid_auth',
      retryable: false,
    });
  });

  it('reports account_inactive as permanent', async () => {
    slack.script('chat.postMessage', { error: 'account_inactive' });
    expect(await post()).toMatchObject({ ok: false, code: 'account_inactive', retryable: false });
  });

  it('reports msg_blocks_too_long as permanent: the same blocks would be refused again', async () => {
    slack.script('chat.postMessage', { error: 'msg_blocks_too_long' });
    expect(await post()).toMatchObject({ ok: false, retryable: false, code: 'msg_blocks_too_long' });
  });

  it('treats an unknown or internal platform error as retryable', async () => {
    slack.script('chat.postMessage', { error: 'internal_error' });
    expect(await post()).toMatchObject({ ok: false, code: 'internal_error', retryable: true });
  });

  it('treats an HTTP 503 as retryable after a single call', async () => {
    slack.script('chat.postMessage', { status: 503 });
    expect(await post()).toMatchObject({ ok: false, code: 'http_503', retryable: true });
    expect(slack.calls).toHaveLength(1);
  });

  it('treats an unreachable chat API as retryable', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const outcome = await postChatMessage(
      { token: TOKEN, channel: 'C0ALERTS', notice, publicBaseUrl: BASE },
      { slackApiUrl: `http://127.0.0.1:${port}/api/`, timeoutMs: 2_000 },
    );
    expect(outcome).toMatchObject({ ok: false, code: 'request_error', retryable: true });
  });
});
