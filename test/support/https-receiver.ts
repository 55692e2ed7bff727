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
  /** Every request in arrival order. */
  requests: ReceivedRequest[];
  /** `https://{host}:{port}{path}`; host defaults to 127.0.0.1. */
  url(path?: string, host?: string): string;
  /** Queues responses for the next requests, in order; afterwards requests get 200. */
  respondWith(...responses: ScriptedResponse[]): void;
  close(): Promise<void>;
}

/** A local https server (127.0.0.1) that records each request and answers as scripted. */
export async function startHttpsReceiver(tls: TestTls = testTls()): Promise<HttpsReceiver> {
  const requests: ReceivedRequest[] = [];
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    tls,
    requests,
    url: (path = '/hook', host = '127.0.0.1') => `https://${host}:${port}${path}`,
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
