import { EventEmitter } from 'node:events';
import { Readable, Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';

/** What a route answered: its status, headers (lower-case names) and body. */
export interface RouteAnswer {
  statusCode: number;
  headers: Record<string, string | number | string[]>;
  body: string;
}

type Headers = Record<string, string | number | string[]>;

/** The connection of every in-process call: loopback, never timing out, nothing to close. */
const socket = Object.assign(new EventEmitter(), {
  remoteAddress: '127.0.0.1',
  remotePort: 0,
  encrypted: false,
  setTimeout() {},
  destroy() {},
});

/** The request fastify reads: method, URL, headers and the body as one chunk. */
class CallRequest extends Readable {
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
  override _read() {
    if (this.#body) this.push(this.#body);
    this.#body = undefined;
    this.push(null);
  }
}

/** The response fastify writes: status and headers as `http.ServerResponse` takes them, the body as chunks. */
class CallResponse extends Writable {
  statusCode = 200;
  statusMessage = '';
  headersSent = false;
  readonly headers: Headers = {};
  readonly chunks: Buffer[] = [];
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
    if (typeof message === 'string') this.statusMessage = message;
    for (const name in given) this.setHeader(name, given[name]!);
    this.headersSent = true;
    return this;
  }
  addTrailers() {}
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void) {
    this.headersSent = true;
    this.chunks.push(chunk);
    done();
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
    const response = new CallResponse();
    response.once('finish', () =>
      settle({
        statusCode: response.statusCode,
        headers: response.headers,
        body: Buffer.concat(response.chunks).toString('utf8'),
      }),
    );
    // A Writable, unlike http.ServerResponse, emits the error it is destroyed with: unheard, it
    // would throw out of fastify and leave this call pending.
    response.on('error', fail);
    response.once('close', () => {
      if (!response.writableFinished) fail(new Error('The route closed its response unanswered.'));
    });
    app.routing(request as never, response as never);
  });
}
