import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerFactory,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import { DEFAULT_RATE_LIMIT, type RateLimitConfig } from '../config.ts';
import type { Db } from '../db/db.ts';
import {
  BadRequestError,
  NotFoundError,
  TooManyRequestsError,
  UnavailableError,
  ValidationError,
} from '../errors.ts';
import { KeyVerifier } from '../platform/keys.ts';
import { unstorableText } from '../storable-text.ts';
import { auth } from './auth.ts';
import { type CursorCodec, createCursorCodec } from './cursor.ts';
import type { EarlyServer } from './early-server.ts';
import { healthRoutes } from './health.ts';
import { jsonBodyParser } from './json-body.ts';
import { parseFormFields } from './multipart.ts';
import { problemSchema, sendClientErrorProblem, sendProblem, toProblem } from './problem.ts';
import { rateLimits } from './rate-limit.ts';
import { buildValidator } from './validation.ts';

export interface HttpDeps {
  db: Db;
  cursorKey: Buffer;
  /** Cursor keys of the previous root keys: their cursors are still accepted (cursor.ts). */
  previousCursorKeys?: readonly Buffer[];
  /** Route plugins of each capability, registered under the shared infrastructure. */
  routes: FastifyPluginAsync[];
  /** A pino logger for requests; none when omitted (tests). */
  logger?: FastifyBaseLogger;
  bodyLimit?: number;
  /** Requests per minute per key and per address; the defaults of src/config.ts when omitted. */
  rateLimit?: RateLimitConfig;
  /** Proxies trusted to name the client address (X-Forwarded-For); none when omitted. */
  trustProxy?: string[];
  /** An already listening server to serve on (see early-server.ts); the app then needs no listen(). */
  server?: EarlyServer;
}

declare module 'fastify' {
  interface FastifyInstance {
    db: Db;
    cursors: CursorCodec;
  }
}

export const API_VERSION = '0.1.0';

/** The largest request body: 10 MiB; one byte more is 413 (docs/api-conventions.md). */
const MAX_BODY_BYTES = 10 * 1024 * 1024;

const SECRET_QUERY = /([?&](?:api-key|token)=)[^&#]*/gi;
export const redactUrl = (url: string) => url.replace(SECRET_QUERY, '$1[redacted]');

/**
 * fastify's request lines ("incoming request", "request completed"), except for an MCP tool's
 * route pass: its `/mcp` request logs the call under the same request id (docs/agents.md), so the
 * route pass would only write two more lines per call. Its errors are logged as any request's.
 */
class RequestLines extends LogController {
  constructor(private readonly delegated: (request: FastifyRequest) => boolean) {
    super();
  }
  override incomingRequest(request: FastifyRequest, reply: FastifyReply) {
    if (!this.delegated(request)) super.incomingRequest(request, reply);
  }
  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply) {
    if (error || !this.delegated(request)) super.requestCompleted(error, request, reply);
  }
}

/** The fastify app: problem+json errors, schemas for everything, /openapi.json, auth, health. */
export async function buildHttpApp(deps: HttpDeps): Promise<FastifyInstance> {
  let appHandler: Parameters<EarlyServer['attach']>[0] | undefined;
  const options: FastifyServerOptions & { serverFactory?: FastifyServerFactory } = {
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    logController: new RequestLines((request) => app.isDelegated(request)),
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.:-]{1,128}$/.test(given) ? given : randomUUID();
    },
    ...(deps.server
      ? {
          serverFactory: ((handler: Parameters<EarlyServer['attach']>[0]) => {
            appHandler = handler;
            return deps.server!.server;
          }) as FastifyServerFactory,
        }
      : {}),
    // A factory rather than setValidatorCompiler: plugins that add shared schemas get a context
    // of their own, which must still validate bodies without coercion.
    schemaController: {
      compilersFactory: { buildValidator: (shared: Record<string, object>) => buildValidator(shared) },
    } as unknown as FastifyServerOptions['schemaController'],
    bodyLimit: deps.bodyLimit ?? MAX_BODY_BYTES,
    routerOptions: { ignoreTrailingSlash: true },
    // URLs the router cannot take (bad percent-encoding, overlong parameters) answer problems too.
    frameworkErrors: (error, request, reply) => {
      sendProblem(reply, toProblem(error, request));
    },
    // So do requests node's HTTP parser refuses before routing (fastify's own answer is plain JSON).
    clientErrorHandler: sendClientErrorProblem,
    ...(deps.trustProxy?.length ? { trustProxy: deps.trustProxy } : {}),
  };
  const app = Fastify(options) as unknown as FastifyInstance;
  // Requests reach the app once it is ready: before, a route's hooks may not be built yet.
  if (deps.server) app.addHook('onReady', async () => deps.server!.attach(appHandler!));

  app.decorate('db', deps.db);
  app.decorate('cursors', createCursorCodec(deps.cursorKey, deps.previousCursorKeys));
  app.addSchema(problemSchema);

  app.setErrorHandler((error, request, reply) => {
    const body = toProblem(error, request);
    // A 503 that says when to retry is an expected state (a dependency down, an index loading), not a bug.
    if (error instanceof UnavailableError) {
      request.log.warn({ err: error }, 'request refused for now');
      if (error.retryAfterSeconds !== undefined) reply.header('retry-after', error.retryAfterSeconds);
    } else if (error instanceof TooManyRequestsError) reply.header('retry-after', error.retryAfterSeconds);
    else if (body.status >= 500) request.log.error({ err: error }, 'request failed');
    return sendProblem(reply, body);
  });
  // JSON may carry NUL characters and lone surrogates; PostgreSQL text cannot. Refused here, for
  // every route, before they reach an event that no read model could then apply.
  app.addHook('preValidation', async (request) => {
    const body = unstorableText(request.body, '');
    if (body.length)
      throw new ValidationError('invalid_text', 'The request body holds text that cannot be stored.', body);
    const parameters = [
      ...unstorableText(request.params, 'path').map((e) => ({
        ...e,
        location: e.location.replace('path/', 'path.'),
      })),
      ...unstorableText(request.query, 'query').map((e) => ({
        ...e,
        location: e.location.replace('query/', 'query.'),
      })),
    ];
    if (parameters.length)
      throw new BadRequestError(
        'invalid_parameter',
        'A request parameter holds text that cannot be stored.',
        parameters,
      );
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(
      reply,
      toProblem(
        new NotFoundError('route_not_found', `No route ${request.method} ${request.url.split('?')[0]}.`),
        request,
      ),
    ),
  );
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-request-id', request.id);
    return payload;
  });
  jsonBodyParser(app);
  // No text/plain parser: a body of any type not parsed here is 415.
  app.removeContentTypeParser('text/plain');
  // RFC 8058 one-click unsubscribe POSTs carry List-Unsubscribe=One-Click, preferably as
  // multipart/form-data; the routes that take them need nothing from the body but accept it.
  app.addContentTypeParser(
    'multipart/form-data',
    { parseAs: 'buffer', bodyLimit: 8192 },
    (request, body, done) => {
      parseFormFields(body as Buffer, request.headers['content-type'] ?? '').then(
        (fields) => done(null, fields),
        (error: Error) => done(error),
      );
    },
  );
  // application/x-www-form-urlencoded: the RFC 8058 one-click unsubscribe POST.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 8192 },
    (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    },
  );

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'earshot',
        version: API_VERSION,
        description:
          'Podcast intelligence over REST: the podcast catalog, transcripts, search and mentions, people and companies, podcast advertising, chart rankings, and mention alerts.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          bearer: { type: 'http', scheme: 'bearer' },
          apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api-key' },
        },
      },
      security: [{ apiKey: [] }, { bearer: [] }, { apiKeyQuery: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await rateLimits(app, deps.rateLimit ?? DEFAULT_RATE_LIMIT);
  await app.register(auth, { keys: new KeyVerifier(deps.db) });
  await app.register(healthRoutes);
  app.get('/openapi.json', { schema: { hide: true }, config: { auth: 'public' } }, async () => app.swagger());
  for (const routes of deps.routes) await app.register(routes);
  return app;
}
