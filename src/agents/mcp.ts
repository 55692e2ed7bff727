import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BadRequestError, ForbiddenError, UnauthorizedError } from '../errors.ts';
import { API_VERSION } from '../http/app.ts';
import { sendProblem, toProblem } from '../http/problem.ts';
import { type AgentCaller, mcpChallenge } from './credentials.ts';
import type { ToolSet } from './tool-table.ts';
import { buildTools, callTool, invalidArguments, selectSets, type Tool, type ToolResult } from './tools.ts';

export interface McpDeps {
  publicBaseUrl: string;
  callerOf(request: FastifyRequest): Promise<AgentCaller | undefined>;
}

// One for the process: the SDK would otherwise compile a fresh Ajv for every request's Server.
const jsonSchemaValidator = new AjvJsonSchemaValidator();

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** DNS-rebinding protection: the Host must be ours, and so must an Origin when a browser sends one. */
function rebindingProblem(request: FastifyRequest, publicBaseUrl: string) {
  const ours = new URL(publicBaseUrl);
  const hostname = (() => {
    try {
      return new URL(`http://${request.headers.host ?? ''}`).hostname;
    } catch {
      return undefined;
    }
  })();
  if (!hostname || (hostname !== ours.hostname && !LOOPBACK.has(hostname)))
    return new ForbiddenError('invalid_host', `Host ${request.headers.host ?? '(none)'} is not served here.`);
  const origin = request.headers.origin;
  if (origin === undefined) return undefined;
  const originUrl = URL.canParse(origin) ? new URL(origin) : undefined;
  if (!originUrl || (originUrl.origin !== ours.origin && !LOOPBACK.has(originUrl.hostname)))
    return new ForbiddenError('invalid_origin', `Origin ${origin} may not call this MCP server.`);
  return undefined;
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

/** `/mcp`: the MCP server over Streamable HTTP, stateless (docs/agents.md). */
export function mcpRoutes(deps: McpDeps) {
  return async function routes(app: FastifyInstance) {
    let tools: Tool[] | undefined;
    // Built at start-up, once every route is registered: only tools whose route exists are served.
    const allTools = () => {
      tools ??= buildTools(app);
      return tools;
    };
    app.addHook('onReady', async () => {
      allTools();
    });

    const challenge = mcpChallenge(deps.publicBaseUrl);

    function run(tool: Tool, args: Record<string, unknown>, caller: AgentCaller, request: FastifyRequest) {
      return callTool(app, tool, args, caller, request.id);
    }

    function mcpServer(caller: AgentCaller, sets: Set<ToolSet>, request: FastifyRequest) {
      const served = allTools().filter((tool) => sets.has(tool.set));
      const server = new Server(
        { name: 'earshot', version: API_VERSION },
        {
          capabilities: { tools: {} },
          jsonSchemaValidator,
          instructions:
            'earshot: podcast intelligence. Resolve names to ids with the resolve tools, then read podcasts, episodes, transcripts, clips, ads and alerts. earshot_catalog lists every tool; earshot_call calls any of them.',
        },
      );
      server.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: [
          SYSTEM_TOOLS.catalog,
          SYSTEM_TOOLS.call,
          ...served.map((tool) => ({
            name: tool.name,
            description: tool.description,
            inputSchema: tool.inputSchema,
          })),
        ],
      }));
      server.setRequestHandler(CallToolRequestSchema, async (call): Promise<ToolResult> => {
        const args = (call.params.arguments ?? {}) as Record<string, unknown>;
        if (call.params.name === SYSTEM_TOOLS.catalog.name) {
          const listed = allTools().filter((tool) => args.set === undefined || tool.set === args.set);
          const catalog = listed.map((tool) => ({
            name: tool.name,
            set: tool.set,
            description: tool.description,
            served_here: sets.has(tool.set),
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
        if (call.params.name === SYSTEM_TOOLS.call.name) {
          const target = allTools().find((tool) => tool.name === args.name);
          if (!target)
            return invalidArguments(`No tool ${String(args.name)}; see earshot_catalog.`, [
              { location: 'arguments.name', message: 'is not a tool' },
            ]);
          return run(target, (args.arguments ?? {}) as Record<string, unknown>, caller, request);
        }
        const tool = served.find((candidate) => candidate.name === call.params.name);
        if (!tool)
          return invalidArguments(`No tool ${call.params.name} on this connection; see earshot_catalog.`, [
            { location: 'name', message: 'is not a served tool' },
          ]);
        return run(tool, args, caller, request);
      });
      return server;
    }

    async function handle(
      request: FastifyRequest<{ Querystring: { include?: string; exclude?: string } }>,
      reply: FastifyReply,
    ) {
      const rebinding = rebindingProblem(request, deps.publicBaseUrl);
      if (rebinding) return sendProblem(reply, toProblem(rebinding, request));
      const selected = selectSets(request.query.include, request.query.exclude);
      if (selected.unknown)
        return sendProblem(
          reply,
          toProblem(
            new BadRequestError(
              'invalid_parameter',
              `Unknown tool set(s): ${selected.unknown.join(', ')}.`,
              selected.unknown.map((value) => ({
                location: 'query.include',
                message: 'is not a tool set',
                value,
              })),
            ),
            request,
          ),
        );
      const caller = await deps.callerOf(request);
      if (!caller) {
        reply.header('www-authenticate', challenge);
        return sendProblem(
          reply,
          toProblem(
            new UnauthorizedError(
              'unauthorized',
              'An API key or an OAuth access token for this server is required.',
            ),
            request,
          ),
        );
      }
      if (request.method !== 'POST') {
        reply.header('allow', 'POST');
        return reply.code(405).send();
      }
      const server = mcpServer(caller, selected.sets, request);
      // Stateless: every POST carries its own credential and needs nothing from an earlier one.
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      await server.connect(transport);
      reply.hijack();
      reply.raw.setHeader('x-request-id', request.id);
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      await transport.handleRequest(request.raw, reply.raw, request.body);
    }

    const options = {
      config: { auth: 'public' as const },
      schema: {
        hide: true,
        querystring: {
          type: 'object',
          properties: {
            include: { type: 'string', maxLength: 200 },
            exclude: { type: 'string', maxLength: 200 },
          },
        },
      },
    };
    app.post('/mcp', options, handle);
    app.get('/mcp', options, handle);
    app.delete('/mcp', options, handle);
  };
}
