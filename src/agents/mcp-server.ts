import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  type CallToolRequest,
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  InitializeRequestSchema,
  isJSONRPCRequest,
  type JSONRPCRequest,
  type JSONRPCResponse,
  ListToolsRequestSchema,
  McpError,
  PingRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { API_VERSION } from '../http/app.ts';
import type { AgentCaller } from './credentials.ts';
import { isPlainToolCall, type PostTransport, plain } from './mcp-transport.ts';
import type { ToolSet } from './tool-table.ts';
import { invalidArguments, type Tool, type ToolCallNote, type ToolResult } from './tools.ts';

/** Who sent a POST and which tool sets its URL serves: all a handler needs besides the message. */
export interface McpConnection {
  caller: AgentCaller;
  sets: ReadonlySet<ToolSet>;
  /** The HTTP request id, carried into the tool's route call. */
  requestId: string;
  /** The route calls of the POST's tools, for its log line. */
  calls: ToolCallNote[];
}

const SYSTEM_TOOLS = {
  catalog: {
    name: 'earshot_catalog',
    description:
      'Lists every earshot tool with its set, description and input schema, including sets this connection does not serve.',
    inputSchema: {
      type: 'object',
      properties: { set: { type: 'string', description: 'Only the tools of this set.' } },
      additionalProperties: false,
    },
  },
  call: {
    name: 'earshot_call',
    description:
      'Calls any earshot tool by name (see earshot_catalog), even one whose set this connection leaves out.',
    inputSchema: {
      type: 'object',
      required: ['name'],
      properties: {
        name: { type: 'string', description: 'The tool name, e.g. earshot_podcast_get.' },
        arguments: { type: 'object', description: "The tool's arguments.", additionalProperties: true },
      },
      additionalProperties: false,
    },
  },
} as const;

/**
 * A result of the shape earshot's tools build (docs/agents.md, "How a call runs"): `content`, text
 * items only, then `structuredContent`, then a boolean `isError` if any, all plain objects. The
 * SDK's CallToolResultSchema passes such a result and gives back a copy with the same keys in the
 * same order, except for an own `__proto__` key (dropped) or a symbol key (refused) in
 * `structuredContent`: without those, the result serializes as the copy would, unchecked.
 */
function unchanged(result: unknown): boolean {
  if (!plain(result)) return false;
  const keys = Object.keys(result);
  if (keys[0] !== 'content' || keys[1] !== 'structuredContent') return false;
  if (
    keys.length !== 2 &&
    !(keys.length === 3 && keys[2] === 'isError' && typeof result.isError === 'boolean')
  )
    return false;
  const { content, structuredContent } = result;
  if (!Array.isArray(content) || Object.getPrototypeOf(content) !== Array.prototype) return false;
  for (const item of content) {
    if (!plain(item) || item.type !== 'text' || typeof item.text !== 'string') return false;
    const itemKeys = Object.keys(item);
    if (itemKeys.length !== 2 || itemKeys[0] !== 'type') return false;
  }
  return (
    plain(structuredContent) &&
    !Object.hasOwn(structuredContent, '__proto__') &&
    Object.getOwnPropertySymbols(structuredContent).length === 0
  );
}

/** What the SDK's schemas report of a value they refuse (a zod issue), as far as it is read here. */
interface SchemaIssue {
  code: string;
  path: PropertyKey[];
  message: string;
  expected?: string;
  errors?: SchemaIssue[][];
}
type ParamsCheck = (
  message: unknown,
) => { success: true; data: { params?: unknown } } | { success: false; error: { issues: SchemaIssue[] } };

/**
 * The requests the `Server` answers (a `tools/call` never reaches it), each with the SDK schema its
 * dispatch parses it with. Their params are checked here first: the dispatch turns a schema's
 * refusal into -32603, an internal error (SDK issue 2284), where JSON-RPC says -32602.
 */
const ANSWERED = new Map<string, ParamsCheck>(
  [InitializeRequestSchema, PingRequestSchema, ListToolsRequestSchema].map((schema) => [
    schema.shape.method.value,
    (message) => schema.safeParse(message) as ReturnType<ParamsCheck>,
  ]),
);

/** At most this many errors in an answer's `data.errors`, as for a tool's arguments; the first few in its message. */
const ERRORS_MAX = 100;
const ERRORS_IN_MESSAGE = 5;
const TYPE_NAMES: Record<string, string> = { record: 'object', int: 'integer' };
const typeName = (expected: string | undefined) => TYPE_NAMES[expected ?? ''] ?? expected ?? 'a value';
const kindOf = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

function valueAt(message: unknown, path: readonly PropertyKey[]) {
  let value = message;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** One refused part of the params, named by its place in the message: `params.name`, `params._meta.progressToken`. */
function paramsError(issue: SchemaIssue, message: unknown) {
  const location = issue.path.map(String).join('.');
  const branches = issue.code === 'invalid_union' ? issue.errors : undefined;
  // A union of plain types (a progress token: a string or an integer) reads as one expectation.
  const types = branches?.map(([only, ...more]) =>
    only?.code === 'invalid_type' && !more.length && !only.path.length ? typeName(only.expected) : undefined,
  );
  const expected =
    issue.code === 'invalid_type'
      ? typeName(issue.expected)
      : types?.length && types.every((type) => type !== undefined)
        ? types.join(' or ')
        : undefined;
  if (expected === undefined) return { location, message: issue.message.replace(/^Invalid input: /, '') };
  const value = valueAt(message, issue.path);
  return {
    location,
    message:
      value === undefined ? `missing (expected ${expected})` : `expected ${expected}, got ${kindOf(value)}`,
  };
}

/** A JSON-RPC error answer, as the SDK's `Protocol` builds one. */
const errorAnswer = (id: JSONRPCRequest['id'], code: number, message: string, data?: unknown) =>
  ({
    jsonrpc: '2.0',
    id,
    error: { code, message, ...(data !== undefined && { data }) },
  }) as unknown as JSONRPCResponse;

/** The -32602 answer to a request whose params its method's schema refused, naming each refused part. */
function invalidParams(request: JSONRPCRequest, issues: readonly SchemaIssue[]): JSONRPCResponse {
  const errors = issues.slice(0, ERRORS_MAX).map((issue) => paramsError(issue, request));
  const listed = errors.slice(0, ERRORS_IN_MESSAGE).map((error) => `${error.location}: ${error.message}`);
  if (issues.length > ERRORS_IN_MESSAGE) listed.push(`${issues.length - ERRORS_IN_MESSAGE} more`);
  const message = `Invalid params for ${request.method}: ${listed.join('; ')}`;
  return errorAnswer(request.id, ErrorCode.InvalidParams, message, { errors });
}

/**
 * The one SDK `Server` of the process. It keeps nothing of a client between messages that earshot
 * reads (an initialize's client capabilities matter only for requests to the client, which
 * earshot never makes), so every POST can share it; its caller comes from the transport.
 */
export function createMcpServer(
  tools: () => readonly Tool[],
  transport: PostTransport<McpConnection>,
  run: (tool: Tool, args: Record<string, unknown>, connection: McpConnection) => Promise<ToolResult>,
) {
  const server = new Server(
    { name: 'earshot', version: API_VERSION },
    {
      capabilities: { tools: {} },
      instructions:
        'earshot: podcast intelligence. Resolve names to ids with the resolve tools, then read podcasts, episodes, transcripts, clips, ads and alerts. earshot_catalog lists every tool; earshot_call calls any of them.',
    },
  );
  let byName: Map<string, Tool> | undefined;
  const toolNamed = (name: unknown) => {
    byName ??= new Map(tools().map((tool) => [tool.name, tool]));
    return typeof name === 'string' ? byName.get(name) : undefined;
  };
  const connectionOf = (requestId: string | number) => {
    const connection = transport.contextOf(requestId);
    if (!connection) throw new Error(`No POST is waiting for MCP request ${requestId}.`);
    return connection;
  };
  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => {
    const { sets } = connectionOf(extra.requestId);
    return {
      tools: [
        SYSTEM_TOOLS.catalog,
        SYSTEM_TOOLS.call,
        ...tools()
          .filter((tool) => sets.has(tool.set))
          .map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema })),
      ],
    };
  });
  const answer = async (
    params: CallToolRequest['params'],
    connection: McpConnection,
  ): Promise<ToolResult> => {
    const args = (params.arguments ?? {}) as Record<string, unknown>;
    if (params.name === SYSTEM_TOOLS.catalog.name) {
      const listed = tools().filter((tool) => args.set === undefined || tool.set === args.set);
      const catalog = listed.map((tool) => ({
        name: tool.name,
        set: tool.set,
        description: tool.description,
        served_here: connection.sets.has(tool.set),
        input_schema: tool.inputSchema,
      }));
      return {
        content: [
          {
            type: 'text',
            text: catalog.map((tool) => `${tool.name} (${tool.set}): ${tool.description}`).join('\n'),
          },
        ],
        structuredContent: { tools: catalog },
      };
    }
    if (params.name === SYSTEM_TOOLS.call.name) {
      const target = toolNamed(args.name);
      if (!target)
        return invalidArguments(`No tool ${String(args.name)}; see earshot_catalog.`, [
          { location: 'arguments.name', message: 'is not a tool' },
        ]);
      return run(target, (args.arguments ?? {}) as Record<string, unknown>, connection);
    }
    const tool = toolNamed(params.name);
    if (!tool || !connection.sets.has(tool.set))
      return invalidArguments(`No tool ${params.name} on this connection; see earshot_catalog.`, [
        { location: 'name', message: 'is not a served tool' },
      ]);
    return run(tool, args, connection);
  };
  server.setRequestHandler(CallToolRequestSchema, async (call, extra) =>
    answer(call.params, connectionOf(extra.requestId)),
  );
  /**
   * A well-formed `tools/call` answered without the SDK's per-message dispatch (docs/agents.md,
   * "How a call runs"): answered by the same handler, its result checked and its response built as
   * the SDK's `Server` and `Protocol` do.
   */
  const respond = (
    id: JSONRPCRequest['id'],
    params: CallToolRequest['params'],
    connection: McpConnection,
  ): Promise<JSONRPCResponse> =>
    answer(params, connection)
      .then((result) => {
        if (unchanged(result)) return result;
        const checked = CallToolResultSchema.safeParse(result);
        if (!checked.success)
          throw new McpError(ErrorCode.InvalidParams, `Invalid tools/call result: ${checked.error.message}`);
        return checked.data;
      })
      .then(
        (result) => ({ result, jsonrpc: '2.0', id }) as JSONRPCResponse,
        // A thrown null or undefined too (the SDK would never answer it).
        (error: { code?: unknown; message?: string; data?: unknown } | null | undefined) =>
          errorAnswer(
            id,
            Number.isSafeInteger(error?.code) ? (error?.code as number) : ErrorCode.InternalError,
            error?.message ?? 'Internal error',
            error?.data,
          ),
      );
  /**
   * What is answered before the `Server` (docs/agents.md, "How a call runs" and "Protocol errors"), or
   * undefined to leave a request to it. Every `tools/call`: a plain one as it came, any other once
   * checked with the SDK's own CallToolRequestSchema (a `task` is ignored: the server declares no
   * task support, so the call runs as a plain one). Params a method's schema refuses, and a
   * `tools/list` cursor (every tool is listed at once, so no cursor was ever issued): `-32602`. A
   * request of another method with params no request may carry (readPost hands those on): `-32601`,
   * as the `Server` answers a method it does not serve, which would drop such a message unanswered.
   */
  const direct = (
    message: JSONRPCRequest,
    connection: McpConnection,
  ): Promise<JSONRPCResponse> | undefined => {
    if (message.method === CallToolRequestSchema.shape.method.value) {
      if (isPlainToolCall(message)) return respond(message.id, message.params, connection);
      const parsed = CallToolRequestSchema.safeParse(message);
      if (!parsed.success) return Promise.resolve(invalidParams(message, parsed.error.issues));
      return respond(message.id, parsed.data.params, connection);
    }
    const check = ANSWERED.get(message.method);
    if (!check) {
      const { id } = message;
      return isJSONRPCRequest(message)
        ? undefined
        : Promise.resolve(errorAnswer(id, ErrorCode.MethodNotFound, 'Method not found'));
    }
    const parsed = check(message);
    if (!parsed.success) return Promise.resolve(invalidParams(message, parsed.error.issues));
    if (message.method === ListToolsRequestSchema.shape.method.value && message.params?.cursor !== undefined)
      return Promise.resolve(
        errorAnswer(
          message.id,
          ErrorCode.InvalidParams,
          'Invalid params for tools/list: params.cursor: this server lists every tool at once and issues no cursor',
          { errors: [{ location: 'params.cursor', message: 'is not a cursor this server issued' }] },
        ),
      );
    return undefined;
  };
  return { server, direct };
}
