import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Db } from '../db/db.ts';
import { migrationsApplied } from '../db/migrate.ts';
import { parkedCounts } from '../subscriptions/parked.ts';
import { type Metrics, metrics as processMetrics } from './metrics.ts';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

function send(response: ServerResponse, status: number, type: string, body: string) {
  response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
}

function sendProblem(
  response: ServerResponse,
  status: number,
  title: string,
  errorCode: string,
  detail: string,
) {
  const body = { type: 'about:blank', title, status, detail, error_code: errorCode, errors: null };
  send(response, status, 'application/problem+json', JSON.stringify(body));
}

/**
 * What a process without the api role serves on PORT: /healthz and /readyz (the api's bodies) and
 * /metrics, so matchers, projectors and deliverers can be health-checked and scraped. Attach it to
 * the early server (src/http/early-server.ts) once the runtime is open.
 */
export function opsHandler(deps: { db: Db; metrics?: Metrics }): Handler {
  const metrics = deps.metrics ?? processMetrics;
  // The api registers the same source in its own processes; from the table, so all agree.
  metrics.registerParkedEvents(() => parkedCounts(deps.db));

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('allow', 'GET, HEAD');
      return sendProblem(
        response,
        405,
        'Method Not Allowed',
        'method_not_allowed',
        `${request.method} is not served here.`,
      );
    }
    if (path === '/healthz') return send(response, 200, 'application/json', '{"status":"ok"}');
    if (path === '/readyz') {
      let database = 'ok';
      let migrations = 'ok';
      try {
        await deps.db.query('select 1');
        if (!(await migrationsApplied(deps.db))) migrations = 'pending';
      } catch {
        database = 'unreachable';
        migrations = 'unknown';
      }
      const ready = database === 'ok' && migrations === 'ok';
      const body = { status: ready ? 'ready' : 'not_ready', checks: { database, migrations } };
      return send(response, ready ? 200 : 503, 'application/json', JSON.stringify(body));
    }
    if (path === '/metrics')
      return send(response, 200, metrics.registry.contentType, await metrics.registry.metrics());
    sendProblem(
      response,
      404,
      'Not Found',
      'route_not_found',
      `No route ${request.method} ${path}: a process without the api role serves /healthz, /readyz and /metrics only.`,
    );
  }

  return (request, response) => {
    handle(request, response).catch(() => {
      if (response.headersSent) response.destroy();
      else
        sendProblem(
          response,
          500,
          'Internal Server Error',
          'internal_error',
          'An unexpected error occurred.',
        );
    });
  };
}
