import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatApiError, listChannels } from '../../src/chat/channels.ts';
import { type SlackStandin, type StandinChannel, startSlackStandin } from '../support/slack-standin.ts';

const TOKEN = 'xoxb-test-token';
const channels: StandinChannel[] = [
  ...Array.from({ length: 450 }, (_, i) => ({ id: `C${String(i).padStart(4, '0')}`, name: `channel-${i}` })),
  { id: 'G0SECRET', name: 'secret', is_private: true, is_member: true },
  { id: 'C0OLD', name: 'old', is_archived: true },
  { id: 'C0OUT', name: 'outside', is_member: false },
];

let slack: SlackStandin;
beforeAll(async () => {
  slack = await startSlackStandin({ tokens: [TOKEN], channels });
});
afterAll(() => slack.close());

describe('listing the channels of a chat connection', () => {
  it('follows the cursor through every page and leaves out archived channels', async () => {
    slack.calls.length = 0;
    const listed = await listChannels(TOKEN, { slackApiUrl: slack.url });
    expect(listed).toHaveLength(452);
    expect(new Set(listed.map((c) => c.id)).size).toBe(452);
    expect(listed.find((c) => c.id === 'G0SECRET')).toEqual({
      id: 'G0SECRET',
      name: 'secret',
      isPrivate: true,
      isMember: true,
    });
    expect(listed.find((c) => c.id === 'C0OUT')).toMatchObject({ isMember: false });
    expect(listed.some((c) => c.id === 'C0OLD')).toBe(false);
    expect(slack.calls.map((c) => c.method)).toEqual([
      'conversations.list',
      'conversations.list',
      'conversations.list',
    ]);
    expect(slack.calls[0]?.params).toMatchObject({
      types: 'public_channel,private_channel',
      exclude_archived: 'true',
      limit: '200',
    });
  });

  it('throws a permanent ChatApiError for a token Slack rejects', async () => {
    const error = await listChannels('xoxb-wrong', { slackApiUrl: slack.url }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChatApiError);
    expect(error).toMatchObject({ code: 'invalid_auth', retryable: false });
  });

  it('throws a retryable ChatApiError with Retry-After when rate limited mid-way', async () => {
    slack.script('conversations.list', { status: 429, retryAfter: 3 });
    const error = await listChannels(TOKEN, { slackApiUrl: slack.url }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ratelimited', retryable: true, retryAfterMs: 3_000 });
  });
});
