import type { IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { type TestTls, testTls } from './tls.ts';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The exact bytes of the request body. */
  body: Buffer;
  receivedAt: Date;
}

export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait this long after the request body arrived before answering. */
  delayMs?: number;
}

export interface HttpsReceiver {
  port: number;
  tls: TestTls;
  /** The address it listens on (127.0.0.1 unless asked otherwise). */
  host: string;
  /** Every request in arrival order. */
  requests: ReceivedRequest[];
  /** TLS connections accepted so far (a reused keep-alive connection counts once). */
  readonly connections: number;
  /** TLS connections open now. */
  readonly openConnections: number;
  /** `https://{host}:{port}{path}`; host defaults to the listening address. */
  url(path?: string, host?: string): string;
  /** Queues responses for the next requests, in order; afterwards requests get 200. */
  respondWith(...responses: ScriptedResponse[]): void;
  close(): Promise<void>;
}

/**
 * A local https server (127.0.0.1, or another loopback address such as 127.0.0.2) that records
 * each request and counts its TLS connections, and answers as scripted.
 */
export async function startHttpsReceiver(
  tls: TestTls = testTls(),
  options: { host?: string; port?: number } = {},
): Promise<HttpsReceiver> {
  const host = options.host ?? '127.0.0.1';
  const requests: ReceivedRequest[] = [];
  let connections = 0;
  const script: ScriptedResponse[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        receivedAt: new Date(),
      });
      const { status = 200, headers = {}, body = '{"received":true}', delayMs = 0 } = script.shift() ?? {};
      const answer = () => {
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(body);
      };
      if (delayMs === 0) return answer();
      const timer = setTimeout(() => {
        timers.delete(timer);
        answer();
      }, delayMs);
      timers.add(timer);
    });
  });
  const open = new Set<object>();
  server.on('secureConnection', (socket) => {
    connections += 1;
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    host,
    tls,
    requests,
    get connections() {
      return connections;
    },
    get openConnections() {
      return open.size;
    },
    url: (path = '/hook', urlHost = host) => `https://${urlHost}:${port}${path}`,
    respondWith: (...responses) => {
      script.push(...responses);
    },
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
