import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

export interface EarlyServer {
  server: Server;
  url: string;
  /** From now on every request goes to the app. */
  attach(handler: Handler): void;
}

const starting: Handler = (request, response) => {
  const path = (request.url ?? '/').split('?')[0];
  if (path === '/healthz') {
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    return;
  }
  const body =
    path === '/readyz'
      ? { status: 'not_ready', checks: { database: 'starting', migrations: 'pending' } }
      : {
          type: 'about:blank',
          title: 'Service Unavailable',
          status: 503,
          detail: 'earshot is starting: the database is being opened and migrated.',
          error_code: 'starting',
          errors: null,
        };
  response
    .writeHead(503, {
      'content-type': path === '/readyz' ? 'application/json' : 'application/problem+json',
      'retry-after': '1',
    })
    .end(JSON.stringify(body));
};

/**
 * Listens before the database is open, so liveness (/healthz) answers at once while a first start
 * initialises embedded storage; everything else is 503 with Retry-After until the app attaches.
 */
export async function listenEarly(port: number, host: string): Promise<EarlyServer> {
  let handler: Handler = starting;
  const server = createServer((request, response) => handler(request, response));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    server,
    url: `http://${shownHost === '0.0.0.0' || shownHost === '[::]' ? '127.0.0.1' : shownHost}:${address.port}`,
    attach(next) {
      handler = next;
    },
  };
}
