import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorObject } from 'ajv';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import {
  EarshotError,
  type ErrorDetail,
  type ErrorResolve,
  PlanError,
  UnavailableError,
  UnresolvedReferenceError,
} from '../errors.ts';
import { ajvErrorDetail, shortValue } from '../validation-errors.ts';

/** RFC 9457 problem details, with error_code, errors[] and resolve (docs/api-conventions.md, Errors). */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  error_code: string;
  errors: ErrorDetail[] | null;
  resolve?: ErrorResolve;
}

export const problemSchema = {
  $id: 'Problem',
  type: 'object',
  required: ['type', 'title', 'status', 'error_code'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    instance: { type: 'string' },
    error_code: { type: 'string' },
    errors: {
      type: ['array', 'null'],
      items: {
        type: 'object',
        required: ['location', 'message'],
        properties: { location: { type: 'string' }, message: { type: 'string' }, value: {} },
      },
    },
    resolve: {
      type: 'object',
      required: ['message'],
      properties: {
        message: { type: 'string' },
        action: { type: 'string' },
        endpoint: { type: 'string' },
        method: { type: 'string' },
        url: { type: 'string' },
      },
    },
  },
} as const;

/** Response entries for a route's error statuses, for validation-free docs in /openapi.json. */
export function problemResponses(...statuses: number[]) {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      {
        description: STATUS_CODES[status] ?? 'Error',
        content: { 'application/problem+json': { schema: { $ref: 'Problem#' } } },
      },
    ]),
  );
}

/** At most this many errors[] entries are listed; the detail then says how many there were. */
const MAX_LISTED_ERRORS = 100;

/** Problems stay small whatever was sent: few entries, each echoing a short value. */
function listed(errors: ErrorDetail[] | null, detail: string): [ErrorDetail[] | null, string] {
  if (!errors) return [null, detail];
  const shown = errors
    .slice(0, MAX_LISTED_ERRORS)
    .map((error) => (error.value === undefined ? error : { ...error, value: shortValue(error.value) }));
  return errors.length > MAX_LISTED_ERRORS
    ? [shown, `${detail} The first ${MAX_LISTED_ERRORS} of ${errors.length} errors are listed.`]
    : [shown, detail];
}

function problem(
  request: FastifyRequest,
  status: number,
  errorCode: string,
  detail: string,
  errors: ErrorDetail[] | null,
): Problem {
  const [shown, described] = listed(errors, detail);
  return {
    type: 'about:blank',
    title: STATUS_CODES[status] ?? 'Error',
    status,
    detail: described,
    instance: `urn:earshot:request:${request.id}`,
    error_code: errorCode,
    errors: shown,
  };
}

export function sendProblem(reply: FastifyReply, body: Problem) {
  return reply.code(body.status).type('application/problem+json').send(JSON.stringify(body));
}

const CONTEXT_PREFIX: Record<string, string> = { querystring: 'query', params: 'path', headers: 'header' };

/** Body errors are JSON pointers into the body (/events/3/episode/published_at); others query.limit, path.id. */
function validationDetails(request: FastifyRequest, context: string, errors: ErrorObject[]): ErrorDetail[] {
  const sources: Record<string, unknown> = {
    body: request.body,
    querystring: request.query,
    params: request.params,
    headers: request.headers,
  };
  const locate = (pointer: string) =>
    context === 'body'
      ? pointer || '/'
      : `${CONTEXT_PREFIX[context] ?? context}${pointer.replaceAll('/', '.')}`;
  return errors.map((error) => ajvErrorDetail(error, sources[context], locate));
}

/** The one mapping from thrown errors to problem+json; 5xx details never reach the client. */
export function toProblem(error: unknown, request: FastifyRequest): Problem {
  if (error instanceof EarshotError) {
    const body = problem(
      request,
      error.status,
      error.errorCode,
      error.message,
      error.errors.length ? error.errors : null,
    );
    if (
      error instanceof PlanError ||
      error instanceof UnresolvedReferenceError ||
      error instanceof UnavailableError
    )
      body.resolve = error.resolve;
    return body;
  }
  const fastifyError = error as FastifyError & { validationContext?: string };
  if (fastifyError.validation) {
    const context = fastifyError.validationContext ?? 'body';
    const details = validationDetails(request, context, fastifyError.validation as unknown as ErrorObject[]);
    return context === 'body'
      ? problem(request, 422, 'validation_failed', 'The request body does not match the schema.', details)
      : problem(
          request,
          400,
          'invalid_parameter',
          `The request ${CONTEXT_PREFIX[context] ?? context} parameters are invalid.`,
          details,
        );
  }
  const status = fastifyError.statusCode;
  if (fastifyError.code === 'FST_ERR_MAX_PARAM_LENGTH')
    return problem(request, 414, 'uri_too_long', 'A path parameter is longer than 100 characters.', null);
  if (status && status >= 400 && status < 500) {
    const code =
      fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
        ? 'payload_too_large'
        : fastifyError.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
          ? 'unsupported_media_type'
          : status === 400
            ? 'malformed_request'
            : 'request_error';
    return problem(request, status, code, fastifyError.message, null);
  }
  return problem(request, 500, 'internal_error', 'An unexpected error occurred. It has been logged.', null);
}

/**
 * A request node's HTTP parser refused before any route saw it (a malformed request line or
 * header, headers over 16 KiB, headers too slow): answered as a problem too, then the connection
 * is closed, as node and fastify do. No request id exists yet; `instance` gets a fresh one.
 */
export function sendClientErrorProblem(error: Error & { code?: string }, socket: Socket) {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, errorCode, detail] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'header_fields_too_large', 'The request line and headers exceed 16 KiB.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout', 'The request was not received in time.']
        : [400, 'malformed_request', 'The request is not valid HTTP.'];
  const title = STATUS_CODES[status] ?? 'Error';
  const body = JSON.stringify({
    type: 'about:blank',
    title,
    status,
    detail,
    instance: `urn:earshot:request:${randomUUID()}`,
    error_code: errorCode,
    errors: null,
  } satisfies Problem);
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  socket.destroy(error);
}
