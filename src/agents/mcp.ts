import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BadRequestError, ForbiddenError, UnauthorizedError } from '../errors.ts';
import { sendProblem, toProblem } from '../http/problem.ts';
import { type AgentCaller, mcpChallenge } from './credentials.ts';
import { createMcpServer, type McpConnection } from './mcp-server.ts';
import { PostTransport, readPost } from './mcp-transport.ts';
import { buildTools, callTool, selectSets, type Tool } from './tools.ts';

type McpQuery = { include?: string; exclude?: string };

export interface McpDeps {
  publicBaseUrl: string;
  callerOf(request: FastifyRequest): Promise<AgentCaller | undefined>;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
/** Levels at which "request completed" is written. */
const LOGS_INFO = new Set(['trace', 'debug', 'info']);

/** DNS-rebinding protection: the Host must be ours, and so must an Origin when a browser sends one. */
function rebindingProblem(host: string | undefined, origin: string | undefined, ours: URL) {
  const hostname = (() => {
    try {
      return new URL(`http://${host ?? ''}`).hostname;
    } catch {
      return undefined;
    }
  })();
  if (!hostname || (hostname !== ours.hostname && !LOOPBACK.has(hostname)))
    return new ForbiddenError('invalid_host', `Host ${host ?? '(none)'} is not served here.`);
  if (origin === undefined) return undefined;
  const originUrl = URL.canParse(origin) ? new URL(origin) : undefined;
  if (!originUrl || (originUrl.origin !== ours.origin && !LOOPBACK.has(originUrl.hostname)))
    return new ForbiddenError('invalid_origin', `Origin ${origin} may not call this MCP server.`);
  return undefined;
}

/**
 * The Host and Origin pairs found ours, so a client's every POST is not parsed as URLs again.
 * Only admitted pairs are kept, and at most ADMITTED_MAX: refused ones are checked every time.
 */
const ADMITTED_MAX = 256;
function rebindingCheck(ours: URL) {
  const admitted = new Set<string>();
  return (request: FastifyRequest) => {
    const { host, origin } = request.headers;
    // Neither a Host nor an Origin holds a newline (node refuses it in a header value).
    const pair = origin === undefined ? (host ?? '') : `${host ?? ''}\n${origin}`;
    if (admitted.has(pair)) return undefined;
    const problem = rebindingProblem(host, origin, ours);
    if (!problem) {
      if (admitted.size >= ADMITTED_MAX) admitted.clear();
      admitted.add(pair);
    }
    return problem;
  };
}

/** `/mcp`: the MCP server over Streamable HTTP, stateless, answering JSON (docs/agents.md). */
export function mcpRoutes(deps: McpDeps) {
  return async function routes(app: FastifyInstance) {
    let tools: Tool[] | undefined;
    // Built at start-up, once every route is registered: only tools whose route exists are served.
    const allTools = () => {
      tools ??= buildTools(app);
      return tools;
    };
    const transport = new PostTransport<McpConnection>();
    const { server, direct } = createMcpServer(allTools, transport, (tool, args, connection) =>
      callTool(app, tool, args, connection.caller, connection.requestId, connection.calls),
    );
    transport.direct = direct;
    app.addHook('onReady', async () => {
      allTools();
      await server.connect(transport);
    });
    app.addHook('onClose', async () => server.close());

    const challenge = mcpChallenge(deps.publicBaseUrl);
    const rebinding = rebindingCheck(new URL(deps.publicBaseUrl));

    /**
     * The edge of /mcp, for every method: Host and Origin, the tool sets, then the credential.
     * Answers the refusal itself (403, 400, 401 with the discovery challenge) and returns undefined.
     */
    async function admit(request: FastifyRequest<{ Querystring: McpQuery }>, reply: FastifyReply) {
      const refused = rebinding(request);
      if (refused) return void sendProblem(reply, toProblem(refused, request));
      const selected = selectSets(request.query.include, request.query.exclude);
      if (selected.unknown)
        return void sendProblem(
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
        return void sendProblem(
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
      return { caller, sets: selected.sets, requestId: request.id, calls: [] };
    }

    async function handle(request: FastifyRequest<{ Querystring: McpQuery }>, reply: FastifyReply) {
      const connection = await admit(request, reply);
      if (!connection) return reply;
      if (request.method !== 'POST') {
        reply.header('allow', 'POST');
        return reply.code(405).send();
      }
      const post = readPost(request.headers, request.body);
      if ('refused' in post) return reply.code(post.refused.status).send(post.refused.body);
      const answers = await transport.exchange(post.messages, connection);
      // The route passes write no lines of their own: this request's "request completed" names them.
      if (connection.calls.length && LOGS_INFO.has(reply.log.level))
        reply.log = reply.log.child({ tool_calls: connection.calls });
      if (answers.length === 0) return reply.code(202).send();
      // As the SDK's transport answers: one answer alone, several as an array in request order.
      return reply.type('application/json').send(JSON.stringify(answers.length === 1 ? answers[0] : answers));
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
