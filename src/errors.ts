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

export abstract class EarshotError extends Error {
  abstract readonly status: number;
  constructor(
    readonly errorCode: string,
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
  constructor(message = 'A valid API key is required.') {
    super('unauthorized', message);
  }
}

export class ForbiddenError extends EarshotError {
  readonly status = 403;
  constructor(message = 'This credential does not grant access to this resource.', errorCode = 'forbidden') {
    super(errorCode, message);
  }
}

export class NotFoundError extends EarshotError {
  readonly status = 404;
  constructor(message = 'Not found.', errorCode = 'not_found') {
    super(errorCode, message);
  }
}

export class ConflictError extends EarshotError {
  readonly status = 409;
}

/** 402: the organization's plan does not cover the request. */
export class PlanError extends EarshotError {
  readonly status = 402;
  constructor(
    errorCode: string,
    message: string,
    readonly resolve: ErrorResolve,
  ) {
    super(errorCode, message);
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
