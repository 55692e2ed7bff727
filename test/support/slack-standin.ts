import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A channel as conversations.list reports it. */
export interface StandinChannel {
  id: string;
  name: string;
  is_private?: boolean;
  /** Whether the bot is in it; chat.postMessage answers not_in_channel when false. Default true. */
  is_member?: boolean;
  is_archived?: boolean;
}

export interface SlackCall {
  method: string;
  token: string | undefined;
  /** Form fields or JSON members as sent (blocks stay a JSON string for form posts). */
  params: Record<string, unknown>;
}

export interface PostedMessage {
  channel: string;
  text: string | undefined;
  blocks: Array<Record<string, unknown>> | undefined;
  ts: string;
}

/** Overrides the next answer for a method. */
export interface ScriptedSlackResponse {
  /** HTTP status; 429 is sent with Retry-After and `{"ok":false,"error":"ratelimited"}`. */
  status?: number;
  /** Retry-After header value (seconds). */
  retryAfter?: number | string;
  /** Answer 200 `{"ok":false,"error":…}`. */
  error?: string;
}

export interface SlackStandin {
  /** Base Web API URL, e.g. `http://127.0.0.1:1234/api/`: use as SLACK_API_URL. */
  url: string;
  calls: SlackCall[];
  posted: PostedMessage[];
  script(method: string, ...responses: ScriptedSlackResponse[]): void;
  close(): Promise<void>;
}

export interface SlackStandinOptions {
  tokens?: string[];
  channels?: StandinChannel[];
}

async function readParams(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks).toString('utf8');
  if ((req.headers['content-type'] ?? '').includes('application/json')) return body ? JSON.parse(body) : {};
  return Object.fromEntries(new URLSearchParams(body));
}

/**
 * Slack refuses blocks whose text adds up past about 12,000 characters (`msg_blocks_too_long`;
 * undocumented, stated by Slack's SDK maintainers in slackapi/bolt-js#2509).
 */
const BLOCKS_TEXT_LIMIT = 12_000;

/** The characters of every `text` and `alt_text` string in the blocks. */
function textLength(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + textLength(item), 0);
  if (!value || typeof value !== 'object') return 0;
  return Object.entries(value).reduce(
    (sum: number, [key, item]) =>
      sum +
      ((key === 'text' || key === 'alt_text') && typeof item === 'string' ? item.length : textLength(item)),
    0,
  );
}

/** Why Slack would refuse these blocks, or undefined when they are within its limits. */
function blocksProblem(blocks: Array<Record<string, unknown>>): string | undefined {
  if (blocks.length > 50) return `${blocks.length} blocks; at most 50`;
  for (const [i, block] of blocks.entries()) {
    const text = (block.text as { text?: string } | undefined)?.text ?? '';
    if (block.type === 'section' && text.length > 3000)
      return `block ${i}: section text of ${text.length} chars`;
    if (block.type === 'header' && text.length > 150)
      return `block ${i}: header text of ${text.length} chars`;
  }
  return undefined;
}

/** A local stand-in for the Slack Web API (chat.postMessage, conversations.list) on 127.0.0.1. */
export async function startSlackStandin(options: SlackStandinOptions = {}): Promise<SlackStandin> {
  const tokens = new Set(options.tokens ?? ['xoxb-test-token']);
  const channels = options.channels ?? [{ id: 'C0GENERAL', name: 'general' }];
  const calls: SlackCall[] = [];
  const posted: PostedMessage[] = [];
  const scripts = new Map<string, ScriptedSlackResponse[]>();

  const server = createServer(async (req, res) => {
    const reply = (status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
      res.end(JSON.stringify(body));
    };
    const method = (req.url ?? '').replace(/^\/api\//, '').split('?')[0] ?? '';
    const params = await readParams(req);
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const token = bearer ?? (typeof params.token === 'string' ? params.token : undefined);
    calls.push({ method, token, params });

    const scripted = scripts.get(method)?.shift();
    if (scripted) {
      if (scripted.status === 429) {
        return reply(
          429,
          { ok: false, error: 'ratelimited' },
          scripted.retryAfter === undefined ? {} : { 'retry-after': String(scripted.retryAfter) },
        );
      }
      if (scripted.status && scripted.status !== 200)
        return reply(scripted.status, { ok: false, error: 'http_error' });
      if (scripted.error) return reply(200, { ok: false, error: scripted.error });
    }
    if (!token) return reply(200, { ok: false, error: 'not_authed' });
    if (!tokens.has(token)) return reply(200, { ok: false, error: 'invalid_auth' });

    if (method === 'chat.postMessage') {
      const channel = channels.find((c) => c.id === params.channel);
      if (!channel || channel.is_archived) return reply(200, { ok: false, error: 'channel_not_found' });
      if (channel.is_member === false) return reply(200, { ok: false, error: 'not_in_channel' });
      let blocks: Array<Record<string, unknown>> | undefined;
      try {
        blocks =
          typeof params.blocks === 'string' ? JSON.parse(params.blocks) : (params.blocks as typeof blocks);
      } catch {
        return reply(200, { ok: false, error: 'invalid_blocks_format' });
      }
      const text = typeof params.text === 'string' ? params.text : undefined;
      if (!text && !blocks?.length) return reply(200, { ok: false, error: 'no_text' });
      const problem = blocks && blocksProblem(blocks);
      if (problem) return reply(200, { ok: false, error: 'invalid_blocks', errors: [problem] });
      if (blocks && textLength(blocks) > BLOCKS_TEXT_LIMIT)
        return reply(200, { ok: false, error: 'msg_blocks_too_long' });
      const ts = `${Math.floor(Date.now() / 1000)}.${String(posted.length + 1).padStart(6, '0')}`;
      posted.push({ channel: channel.id, text, blocks, ts });
      return reply(200, { ok: true, channel: channel.id, ts, message: { text, blocks, ts } });
    }

    if (method === 'conversations.list') {
      const limit = Math.min(Number(params.limit ?? 100) || 100, 1000);
      const offset = params.cursor
        ? Number(Buffer.from(String(params.cursor), 'base64').toString().replace('offset:', ''))
        : 0;
      const visible = channels.filter((c) => !(params.exclude_archived === 'true' && c.is_archived));
      const page = visible.slice(offset, offset + limit);
      const next =
        offset + limit < visible.length ? Buffer.from(`offset:${offset + limit}`).toString('base64') : '';
      return reply(200, {
        ok: true,
        channels: page.map((c) => ({
          id: c.id,
          name: c.name,
          is_channel: !c.is_private,
          is_private: c.is_private ?? false,
          is_member: c.is_member ?? true,
          is_archived: c.is_archived ?? false,
        })),
        response_metadata: { next_cursor: next },
      });
    }
    return reply(200, { ok: false, error: 'unknown_method' });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/`,
    calls,
    posted,
    script: (method, ...responses) => {
      scripts.set(method, [...(scripts.get(method) ?? []), ...responses]);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
