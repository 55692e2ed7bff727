/**
 * The typed errors of earshot. Each carries a stable error_code; src/http/problem.ts maps them
 * to HTTP statuses in one table.
 */
export interface ErrorDetail {
  location: string;
  message: string;
  value?: unknown;
}

export interface ErrorResolve {
  message: string;
  action?: string;
  endpoint?: string;
  method?: string;
  url?: string;
}

/**
 * A stable snake_case code (docs/api-conventions.md). Typed lowercase so that a sentence passed
 * where the code goes (every error takes the code first) does not compile.
 */
export type ErrorCode = Lowercase<string>;

/** Every error takes `(errorCode, message, …)`, in that order. */
export abstract class EarshotError extends Error {
  abstract readonly status: number;
  constructor(
    readonly errorCode: ErrorCode,
    message: string,
    readonly errors: ErrorDetail[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** 400: a malformed request parameter (query, path, cursor). */
export class BadRequestError extends EarshotError {
  readonly status = 400;
}

/** 422: a well-formed request that breaks a rule. */
export class ValidationError extends EarshotError {
  readonly status = 422;
}

/** 422: a search reference (entity, podcast, episode) that resolves to nothing; resolve names the lookup. */
export class UnresolvedReferenceError extends ValidationError {
  constructor(
    parameter: string,
    value: string,
    readonly resolve: ErrorResolve,
  ) {
    super('unresolved_reference', `${parameter} ${JSON.stringify(value)} resolves to nothing.`, [
      { location: `query.${parameter}`, message: 'resolves to nothing', value },
    ]);
  }
}

export class UnauthorizedError extends EarshotError {
  readonly status = 401;
  constructor(errorCode: ErrorCode = 'unauthorized', message = 'A valid API key is required.') {
    super(errorCode, message);
  }
}

export class ForbiddenError extends EarshotError {
  readonly status = 403;
  constructor(
    errorCode: ErrorCode = 'forbidden',
    message = 'This credential does not grant access to this resource.',
  ) {
    super(errorCode, message);
  }
}

export class NotFoundError extends EarshotError {
  readonly status = 404;
  constructor(errorCode: ErrorCode = 'not_found', message = 'Not found.') {
    super(errorCode, message);
  }
}

export class ConflictError extends EarshotError {
  readonly status = 409;
}

/** 429: the caller has too much work in flight; `retryAfterSeconds` goes out as Retry-After. */
export class TooManyRequestsError extends EarshotError {
  readonly status = 429;
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super('rate_limit_exceeded', message);
  }
}

/** 402: the organization's plan does not cover the request. */
export class PlanError extends EarshotError {
  readonly status = 402;
  constructor(
    errorCode: ErrorCode,
    message: string,
    readonly resolve: ErrorResolve,
  ) {
    super(errorCode, message);
  }
}

/**
 * 503: earshot cannot answer now (the x402 facilitator or an embeddings API down, an index still
 * loading); resolve says what to do meanwhile, `retryAfterSeconds` goes out as Retry-After.
 */
export class UnavailableError extends EarshotError {
  readonly status = 503;
  readonly retryAfterSeconds: number | undefined;
  constructor(
    errorCode: ErrorCode,
    message: string,
    readonly resolve: ErrorResolve,
    options: { cause?: unknown; retryAfterSeconds?: number } = {},
  ) {
    super(errorCode, message, [], { cause: options.cause });
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** The stream's revision is not the one the writer expected. */
export class WrongExpectedRevisionError extends ConflictError {
  constructor(
    readonly streamId: string,
    readonly expected: string | number,
    readonly actual: number,
  ) {
    super('concurrent_modification', `Stream ${streamId} is at revision ${actual}, expected ${expected}.`);
  }
}

/** 409 `connection_secret_unreadable`: a stored connection secret the configured keys cannot open. */
export class ConnectionSecretUnreadableError extends ConflictError {}
