import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isInitializeRequest,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  type JSONRPCNotification,
  type JSONRPCRequest,
  JSONRPCRequestSchema,
  type JSONRPCResponse,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';

// Messages that passed readPost are well-formed (a request's params aside): their shape alone
// tells what they are.
const isRequest = (message: JSONRPCMessage): message is JSONRPCRequest =>
  'method' in message && 'id' in message;
const isNotification = (message: JSONRPCMessage): message is JSONRPCNotification =>
  'method' in message && !('id' in message);

/** An object literal's or JSON.parse's object: no class instance, no null prototype. */
export const plain = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;

/** A `tools/call` as clients send it, in the shape `isPlainToolCall` admits. */
export type PlainToolCall = JSONRPCRequest & {
  method: 'tools/call';
  params: { name: string; arguments?: Record<string, unknown> };
};

/**
 * A `tools/call` of exactly the shape clients send (docs/agents.md, "How a call runs"): the four
 * keys `jsonrpc: '2.0'`, an `id` (string or safe integer), `method`, and `params` holding only a
 * string `name` and, if any, plain-object `arguments` (enumerable string keys, no own `__proto__`
 * or `constructor`). Both SDK schemas it must pass, `JSONRPCMessageSchema` and
 * `CallToolRequestSchema`, accept every such message and give back a copy equal to it, so it is used
 * as it is; any other message goes through the schemas.
 */
export function isPlainToolCall(message: unknown): message is PlainToolCall {
  if (!plain(message) || message.method !== 'tools/call' || message.jsonrpc !== '2.0') return false;
  const { id, params } = message;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return false;
  if (Object.keys(message).length !== 4 || !('id' in message) || !plain(params)) return false;
  if (typeof params.name !== 'string') return false;
  const keys = Object.keys(params).length;
  if (!Object.hasOwn(params, 'arguments')) return keys === 1;
  const args = params.arguments;
  return (
    keys === 2 &&
    plain(args) &&
    !Object.hasOwn(args, '__proto__') &&
    !Object.hasOwn(args, 'constructor') &&
    Object.getOwnPropertySymbols(args).length === 0 &&
    Object.getOwnPropertyNames(args).length === Object.keys(args).length
  );
}

// The method first: parsing every message as an initialize would cost more than the rest.
const isInitialize = (message: JSONRPCMessage) =>
  'method' in message && message.method === 'initialize' && isInitializeRequest(message);

/** A refusal before any message reaches the server: the SDK transport's status and JSON-RPC error. */
export interface PostRefusal {
  status: number;
  body: { jsonrpc: '2.0'; error: { code: number; message: string }; id: null };
}

const refusal = (status: number, code: number, message: string): { refused: PostRefusal } => ({
  refused: { status, body: { jsonrpc: '2.0', error: { code, message }, id: null } },
});

/**
 * A request that the JSON-RPC message schema refused for its `params` alone (not an object, a
 * malformed `_meta`): its `jsonrpc`, `id` and `method` are right, so it can be answered with its own
 * id, `-32602`, instead of refusing the whole POST (docs/agents.md, "Protocol errors").
 */
function paramsAlone(item: unknown): item is JSONRPCRequest {
  if (typeof item !== 'object' || item === null || !('params' in item)) return false;
  const { params: _, ...envelope } = item;
  return JSONRPCRequestSchema.safeParse(envelope).success;
}

/**
 * The Streamable HTTP rules for a POST, as the SDK's own transport applies them (stateless, JSON
 * answers): what the client must accept and send, at most MAX_BATCH_SIZE well-formed JSON-RPC
 * messages, one initialize alone, and a supported MCP-Protocol-Version when one is named. A
 * request whose params alone are malformed is handed on as it came, for `-32602`.
 */
export function readPost(
  headers: { accept?: string; 'content-type'?: string; 'mcp-protocol-version'?: string | string[] },
  body: unknown,
): { messages: JSONRPCMessage[] } | { refused: PostRefusal } {
  const accept = headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream'))
    return refusal(
      406,
      -32000,
      'Not Acceptable: Client must accept both application/json and text/event-stream',
    );
  if (!isJsonContentType(headers['content-type']))
    return refusal(415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
  const raw = Array.isArray(body) ? body : [body];
  if (raw.length > MAX_BATCH_SIZE)
    return refusal(400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`);
  const messages: JSONRPCMessage[] = [];
  for (const item of raw) {
    if (isPlainToolCall(item)) {
      messages.push(item);
      continue;
    }
    const parsed = JSONRPCMessageSchema.safeParse(item);
    if (parsed.success) messages.push(parsed.data);
    else if (paramsAlone(item)) messages.push(item);
    else return refusal(400, -32700, 'Parse error: Invalid JSON-RPC message');
  }
  if (messages.some(isInitialize)) {
    if (messages.length > 1)
      return refusal(400, -32600, 'Invalid Request: Only one initialization request is allowed');
    return { messages };
  }
  const named = headers['mcp-protocol-version'];
  const version = Array.isArray(named) ? named.join(', ') : named;
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version))
    return refusal(
      400,
      -32000,
      `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
    );
  return { messages };
}

interface Pending<Context> {
  clientId: RequestId;
  context: Context;
  settle(response: JSONRPCResponse): void;
}

/**
 * Connects the one SDK `Server` of the process to every `POST /mcp` (docs/agents.md). Each POST
 * hands over its messages with its caller (`exchange`) and gets back the answers to its requests.
 * Two clients may both send `id: 1` at once, so each request is renamed to an id of this process
 * on the way in and given its own id back on the way out; a handler finds its caller with
 * `contextOf(extra.requestId)`.
 */
export class PostTransport<Context> implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  #lastId = 0;
  readonly #pending = new Map<number, Pending<Context>>();
  /**
   * Answers a request without the server, or leaves it to the server (undefined). It must answer a
   * request whose params the JSON-RPC schema refuses (readPost hands those on): the server would
   * drop such a message unanswered.
   */
  direct?: (message: JSONRPCRequest, context: Context) => Promise<JSONRPCResponse> | undefined;

  async start() {}

  async close() {
    this.onclose?.();
  }

  /** The server's answers. Nothing else is sent on: earshot never notifies or asks a client. */
  async send(message: JSONRPCMessage) {
    if ('method' in message) return;
    const pending = this.#pending.get(message.id as number);
    if (!pending) return;
    this.#pending.delete(message.id as number);
    pending.settle({ ...message, id: pending.clientId } as JSONRPCResponse);
  }

  contextOf(requestId: RequestId): Context | undefined {
    return this.#pending.get(requestId as number)?.context;
  }

  /**
   * Delivers one POST's messages and resolves with the answers to its requests, in their order;
   * a request `direct` takes is answered by it, with the client's own id.
   * Notifications are delivered too, except `notifications/cancelled`: on a stateless server it
   * can name no request of another POST, and its request id is the client's, not ours.
   * A response from the client answers nothing (the server never asks), so it is dropped.
   */
  exchange(messages: readonly JSONRPCMessage[], context: Context): Promise<JSONRPCResponse[]> {
    const answers: Promise<JSONRPCResponse>[] = [];
    for (const message of messages) {
      if (isRequest(message)) {
        const direct = this.direct?.(message, context);
        if (direct) {
          answers.push(direct);
          continue;
        }
        const id = ++this.#lastId;
        answers.push(
          new Promise((settle) => this.#pending.set(id, { clientId: message.id, context, settle })),
        );
        this.onmessage?.({ ...message, id });
      } else if (isNotification(message) && message.method !== 'notifications/cancelled') {
        this.onmessage?.(message);
      }
    }
    return Promise.all(answers);
  }
}
