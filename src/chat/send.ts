import { performance } from 'node:perf_hooks';
import type { AlertNotice } from '../email/notice.ts';
import { buildChatMessage } from './blocks.ts';
import { type ChatClientOptions, classifyChatError, createChatClient } from './client.ts';

export interface ChatPost {
  /** The connection's bot token (xoxb-…). */
  token: string;
  channel: string;
  notice: AlertNotice;
  publicBaseUrl: string;
}

export interface ChatOutcome {
  ok: boolean;
  /** The posted message's timestamp id. */
  ts?: string;
  /** Slack's error string or the client's error code. */
  code?: string;
  error?: string;
  retryable: boolean;
  retryAfterMs?: number;
  durationMs: number;
}

/** Posts the notice to one channel with chat.postMessage; one attempt, never throws. */
export async function postChatMessage(post: ChatPost, options: ChatClientOptions = {}): Promise<ChatOutcome> {
  const started = performance.now();
  const message = buildChatMessage(post.notice, post.publicBaseUrl);
  try {
    const result = await createChatClient(post.token, options).chat.postMessage({
      channel: post.channel,
      text: message.text,
      blocks: message.blocks,
      unfurl_links: false,
      unfurl_media: false,
    });
    return {
      ok: true,
      ...(result.ts !== undefined && { ts: result.ts }),
      retryable: false,
      durationMs: Math.round(performance.now() - started),
    };
  } catch (error) {
    return { ok: false, ...classifyChatError(error), durationMs: Math.round(performance.now() - started) };
  }
}
