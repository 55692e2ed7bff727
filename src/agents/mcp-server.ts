import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  type CallToolRequest,
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  type JSONRPCRequest,
  type JSONRPCResponse,
  ListToolsRequestSchema,
  McpError,
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
  /** A well-formed `tools/call`'s params: those of a plain one as they are, else the schema's copy. */
  const callParams = (message: JSONRPCRequest): CallToolRequest['params'] | undefined => {
    if (isPlainToolCall(message)) return message.params;
    const parsed = CallToolRequestSchema.safeParse(message);
    return parsed.success && parsed.data.params.task === undefined ? parsed.data.params : undefined;
  };
  /**
   * A well-formed `tools/call` answered without the SDK's per-message dispatch (docs/agents.md,
   * "How a call runs"): checked once with the SDK's own CallToolRequestSchema (a plain one is known
   * to pass unchanged), answered by the same handler, its result checked and its response built as
   * the SDK's `Server` and `Protocol` do. Anything else (a malformed call, a task-augmented one) is
   * left to the `Server`: undefined.
   */
  const toolCall = (
    message: JSONRPCRequest,
    connection: McpConnection,
  ): Promise<JSONRPCResponse> | undefined => {
    if (message.method !== CallToolRequestSchema.shape.method.value) return undefined;
    const params = callParams(message);
    if (!params) return undefined;
    const id = message.id;
    return answer(params, connection)
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
          ({
            jsonrpc: '2.0',
            id,
            error: {
              code: Number.isSafeInteger(error?.code) ? (error?.code as number) : ErrorCode.InternalError,
              message: error?.message ?? 'Internal error',
              ...(error?.data !== undefined && { data: error.data }),
            },
          }) as unknown as JSONRPCResponse,
      );
  };
  return { server, toolCall };
}
