import { setMaxListeners } from 'node:events';
import pino, { type Logger } from 'pino';
import { buildCapabilities } from './composition.ts';
import type { Config } from './config.ts';
import { migrate } from './db/migrate.ts';
import { openDb } from './db/open.ts';
import { openEventStore } from './eventstore/open.ts';
import { buildHttpApp, redactUrl } from './http/app.ts';
import type { EarlyServer } from './http/early-server.ts';
import { opsHandler } from './observability/ops-handler.ts';
import type { Role, Runtime } from './runtime.ts';
import { deriveKey, loadSecretKey } from './secret-key.ts';
import { runProjection } from './subscriptions/projection-runner.ts';

export function createLogger(config: Pick<Config, 'logLevel'>, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level: config.logLevel,
      base: { service: 'earshot' },
      // Keys may come as ?api-key= and disable links carry ?token=: neither reaches the logs.
      serializers: {
        req: (request: { method: string; url: string; id: string }) => ({
          method: request.method,
          url: redactUrl(request.url),
          id: request.id,
        }),
      },
    },
    destination ?? pino.destination(1),
  );
}

/** Opens the database (migrating it when asked), the event store and the secret key. */
export async function openRuntime(
  config: Config,
  options: { migrate?: boolean; log?: Logger; now?: () => Date } = {},
): Promise<Runtime> {
  const log = options.log ?? createLogger(config);
  const db = await openDb(config);
  try {
    if (options.migrate) {
      const applied = await migrate(db);
      if (applied.length) log.info({ applied }, 'migrations applied');
    }
    const store = await openEventStore(config, db);
    return {
      config,
      db,
      store,
      secretKey: loadSecretKey(config),
      previousSecretKeys: config.previousSecretKeys,
      log,
      now: options.now ?? (() => new Date()),
    };
  } catch (error) {
    await db.close();
    throw error;
  }
}

export async function closeRuntime(runtime: Runtime) {
  await runtime.store.close();
  await runtime.db.close();
}

export interface RunningService {
  /** The HTTP address when the api role runs. */
  url: string | undefined;
  /** Stops taking work, drains in-flight work (bounded), and closes everything. */
  stop(): Promise<void>;
}

const DRAIN_MS = 20_000;

/** Runs the given roles in this process until stop(). */
export async function startService(
  runtime: Runtime,
  roles: readonly Role[],
  options: { server?: EarlyServer } = {},
): Promise<RunningService> {
  const capabilities = buildCapabilities(runtime);
  const controller = new AbortController();
  // Every worker and subscription listens on this one signal.
  setMaxListeners(0, controller.signal);
  const running: Promise<void>[] = [];
  const keep = (name: string, task: Promise<void>) =>
    running.push(
      task.catch((error) => {
        runtime.log.error({ err: error, task: name }, 'background task stopped with an error');
      }),
    );

  if (roles.includes('projector')) {
    for (const projection of capabilities.flatMap((c) => c.projections ?? [])) {
      keep(
        `projection:${projection.name}`,
        runProjection(runtime.db, runtime.store, projection, {
          signal: controller.signal,
          log: runtime.log.child({ projection: projection.name }),
          // The runner retries a failed batch with back-off, then parks its event; each failure is worth a line.
          onError: (error) =>
            runtime.log.error(
              { err: error, projection: projection.name },
              'projection attempt failed; retrying',
            ),
        }),
      );
    }
  }
  for (const worker of capabilities.flatMap((c) => c.workers ?? [])) {
    if (roles.includes(worker.role)) keep(worker.name, worker.run(controller.signal));
  }

  let url: string | undefined;
  const app = roles.includes('api')
    ? await buildHttpApp({
        db: runtime.db,
        cursorKey: deriveKey(runtime.secretKey, 'cursor'),
        previousCursorKeys: (runtime.previousSecretKeys ?? []).map((key) => deriveKey(key, 'cursor')),
        routes: capabilities.flatMap((c) => c.routes ?? []),
        logger: runtime.log.child({ component: 'http' }),
        rateLimit: runtime.config.rateLimit,
        trustProxy: runtime.config.trustProxy,
        ...(options.server ? { server: options.server } : {}),
      })
    : undefined;
  if (app && options.server) {
    await app.ready();
    url = options.server.url;
  } else if (app) {
    url = await app.listen({ port: runtime.config.port, host: runtime.config.host });
  } else if (options.server) {
    // Worker-only processes still answer /healthz, /readyz and /metrics for their orchestrator.
    options.server.attach(opsHandler({ db: runtime.db }));
    url = options.server.url;
  }

  return {
    url,
    async stop() {
      controller.abort();
      if (app) await app.close();
      else if (options.server) await new Promise((resolve) => options.server!.server.close(resolve));
      let timer: NodeJS.Timeout | undefined;
      const drained = await Promise.race([
        Promise.all(running).then(() => true),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), DRAIN_MS);
        }),
      ]);
      clearTimeout(timer);
      if (!drained) runtime.log.warn({ drainMs: DRAIN_MS }, 'background work did not drain in time');
    },
  };
}
