import { EventEmitter } from 'node:events';
import type { FastifyInstance } from 'fastify';

/** What a route answered: its status, headers (lower-case names) and body. */
export interface RouteAnswer {
  statusCode: number;
  headers: Record<string, string | number | string[]>;
  body: string;
}

type Headers = Record<string, string | number | string[]>;
type Callback = (error?: Error | null) => void;

/**
 * A chunk as `http.ServerResponse` takes it, kept without a copy where it can be: a string in
 * its encoding, or any Uint8Array (a web stream body writes those) viewed as a Buffer.
 */
function bytes(chunk: string | Uint8Array, encoding: BufferEncoding | undefined): string | Buffer {
  if (typeof chunk === 'string')
    return encoding === undefined || encoding === 'utf8' || encoding === 'utf-8'
      ? chunk
      : Buffer.from(chunk, encoding);
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/** The connection of every in-process call: loopback, never timing out, nothing to close. */
const socket = Object.assign(new EventEmitter(), {
  remoteAddress: '127.0.0.1',
  remotePort: 0,
  encrypted: false,
  setTimeout() {},
  destroy() {},
});

/**
 * The request fastify reads: method, URL, headers and the body as one chunk. Not a stream: fastify
 * reads a body with `on('data' | 'end' | 'error')` and `resume()`, which is all this serves (a
 * preParsing hook that pipes the raw request would need a Readable; earshot has none).
 */
class CallRequest extends EventEmitter {
  readonly httpVersionMajor = 1;
  readonly httpVersionMinor = 1;
  readonly httpVersion = '1.1';
  readonly aborted = false;
  readonly complete = true;
  readonly socket = socket;
  readonly connection = socket;
  readonly method: string;
  /** Lower-case names, as node's parser gives them and fastify looks them up. */
  readonly headers: Record<string, string> = {};
  #body: Buffer | undefined;
  constructor(
    method: string,
    readonly url: string,
    headers: Record<string, string>,
    body: string | undefined,
  ) {
    super();
    this.method = method.toUpperCase();
    for (const name in headers) this.headers[name.toLowerCase()] = headers[name]!;
    if (body !== undefined) {
      this.#body = Buffer.from(body);
      this.headers['content-length'] = String(this.#body.length);
    }
  }
  /** Delivers the body on the next tick, as a stream would: fastify listens first, then resumes. */
  resume() {
    const body = this.#body;
    this.#body = undefined;
    process.nextTick(() => {
      if (body) this.emit('data', body);
      this.emit('end');
    });
    return this;
  }
}

/**
 * The response fastify writes, with what `http.ServerResponse` offers it: status and headers, the
 * body as chunks, then 'finish' and 'close' on the next tick as a socket's write would. Not a
 * stream either: fastify pipes a stream body into it, which needs only write, end and events.
 */
class CallResponse extends EventEmitter {
  statusCode = 200;
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  destroyed = false;
  readonly headers: Headers = {};
  readonly #chunks: (string | Buffer)[] = [];
  readonly #settle: (answer: RouteAnswer) => void;
  readonly #fail: (error: Error) => void;
  constructor(settle: (answer: RouteAnswer) => void, fail: (error: Error) => void) {
    super();
    this.#settle = settle;
    this.#fail = fail;
  }
  setHeader(name: string, value: string | number | string[]) {
    this.headers[name.toLowerCase()] = value;
    return this;
  }
  getHeader(name: string) {
    return this.headers[name.toLowerCase()];
  }
  hasHeader(name: string) {
    return name.toLowerCase() in this.headers;
  }
  removeHeader(name: string) {
    delete this.headers[name.toLowerCase()];
  }
  getHeaders() {
    return { ...this.headers };
  }
  getHeaderNames() {
    return Object.keys(this.headers);
  }
  writeHead(status: number, message?: string | Headers, headers?: Headers) {
    this.statusCode = status;
    const given = typeof message === 'object' ? message : headers;
    for (const name in given) this.setHeader(name, given[name]!);
    this.headersSent = true;
    return this;
  }
  addTrailers() {}
  write(chunk: string | Uint8Array, encoding?: BufferEncoding | Callback, callback?: Callback): boolean {
    if (typeof encoding === 'function') return this.write(chunk, undefined, encoding);
    this.headersSent = true;
    this.#chunks.push(bytes(chunk, encoding));
    if (callback) process.nextTick(callback);
    return true;
  }
  end(
    chunk?: string | Uint8Array | null | Callback,
    encoding?: BufferEncoding | Callback,
    callback?: Callback,
  ): this {
    if (typeof chunk === 'function') return this.end(undefined, undefined, chunk);
    if (typeof encoding === 'function') return this.end(chunk, undefined, encoding);
    if (this.writableEnded || this.destroyed) {
      if (callback) process.nextTick(callback, new Error('The response has already ended.'));
      return this;
    }
    if (callback) this.once('finish', callback);
    if (chunk != null) this.#chunks.push(bytes(chunk, encoding));
    this.headersSent = true;
    this.writableEnded = true;
    process.nextTick(() => {
      this.writableFinished = true;
      this.emit('finish');
      this.#settle({ statusCode: this.statusCode, headers: this.headers, body: this.#body() });
      this.emit('close');
    });
    return this;
  }
  /** A route that gives up on its response (a broken stream body, a destroy of its own) fails the call. */
  destroy(error?: Error) {
    if (this.destroyed || this.writableFinished) return this;
    this.destroyed = true;
    this.#fail(error ?? new Error('The route closed its response unanswered.'));
    process.nextTick(() => this.emit('close'));
    return this;
  }
  #body() {
    const chunks = this.#chunks;
    // One chunk is the usual answer: a serialized body, or a cached one as a Buffer.
    if (chunks.length === 1) return chunks[0]!.toString();
    return Buffer.concat(
      chunks.map((chunk) => (typeof chunk === 'string' ? Buffer.from(chunk) : chunk)),
    ).toString('utf8');
  }
}

/**
 * Performs a route in-process through fastify's own routing: every hook, validator, serializer
 * and error handler runs as for a request from the network (docs/agents.md). Only the HTTP
 * connection is left out, which is what `app.inject` would simulate at several times the cost.
 */
export function callRoute(
  app: FastifyInstance,
  options: {
    method: string;
    url: string;
    headers: Record<string, string>;
    body?: string;
  },
): Promise<RouteAnswer> {
  return new Promise((settle, fail) => {
    const request = new CallRequest(options.method, options.url, options.headers, options.body);
    app.routing(request as never, new CallResponse(settle, fail) as never);
  });
}
