import { type ChatClientOptions, type ChatFailure, classifyChatError, createChatClient } from './client.ts';

export interface ChatChannel {
  id: string;
  name: string;
  isPrivate: boolean;
  /** Whether the bot is in the channel; posting to a public channel it is not in fails. */
  isMember: boolean;
}

export class ChatApiError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  constructor(failure: ChatFailure, options?: { cause?: unknown }) {
    super(failure.error, options);
    this.name = 'ChatApiError';
    this.code = failure.code;
    this.retryable = failure.retryable;
    this.retryAfterMs = failure.retryAfterMs;
  }
}

/** Pages at most this many times (200 channels each) so a looping cursor cannot hang the API. */
const MAX_PAGES = 100;

/**
 * Every unarchived public and private channel the token can see (conversations.list, all pages).
 * Throws ChatApiError with the Slack error code on failure.
 */
export async function listChannels(token: string, options: ChatClientOptions = {}): Promise<ChatChannel[]> {
  const client = createChatClient(token, options);
  const channels: ChatChannel[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    let result: Awaited<ReturnType<typeof client.conversations.list>>;
    try {
      result = await client.conversations.list({
        types: 'public_channel,private_channel',
        exclude_archived: true,
        limit: 200,
        ...(cursor && { cursor }),
      });
    } catch (error) {
      throw new ChatApiError(classifyChatError(error), { cause: error });
    }
    for (const channel of result.channels ?? []) {
      if (!channel.id) continue;
      channels.push({
        id: channel.id,
        name: channel.name ?? channel.id,
        isPrivate: channel.is_private ?? false,
        isMember: channel.is_member ?? false,
      });
    }
    cursor = result.response_metadata?.next_cursor || undefined;
    if (!cursor) return channels;
  }
  throw new ChatApiError({
    error: `conversations.list returned more than ${MAX_PAGES} pages`,
    code: 'too_many_pages',
    retryable: false,
  });
}
