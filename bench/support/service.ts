import { type ChildProcess, spawn } from 'node:child_process';
import { type AddressInfo, createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

/** The repository's root, where the benchmarks start `earshot`. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A port the system has just handed out: other benchmarks may run on this machine at once. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Polls `check` every 100 ms for up to a minute. */
export async function waitFor(what: string, check: () => Promise<boolean>) {
  for (let i = 0; i < 600; i++) {
    if (await check().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`${what} never happened`);
}

export const waitReady = (url: string) => waitFor(`${url} ready`, async () => (await fetch(url)).ok);

/**
 * Waits for an api process's built-in semantic model, which it loads in the background at start-up
 * (seconds of CPU): a semantic search answers once it is loaded, so no measurement shares the
 * machine with it.
 */
export const waitForSemanticModel = (url: string, headers: Record<string, string>) =>
  waitFor(
    'the semantic model',
    async () => (await fetch(`${url}/v1/podcasts/episodes/search?semantic_search=warm%20up`, { headers })).ok,
  );

/**
 * `earshot serve` with `roles` on 127.0.0.1:`port` over the benchmark's database. One key runs at
 * full speed, so both rate limits are off: a benchmark measures the route, not the limit.
 * `BENCH_LOGS=1` shows the service's logs; `BENCH_LOG_LEVEL` sets their level (default error, so
 * that request lines cost nothing; `info` as in production).
 */
export function spawnService(options: {
  databaseUrl: string;
  port: number;
  roles: string;
  env?: Record<string, string>;
}): { child: ChildProcess; url: string } {
  const url = `http://127.0.0.1:${options.port}`;
  const child = spawn(process.execPath, ['src/cli/earshot.js', 'serve', '--roles', options.roles], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: options.databaseUrl,
      PORT: String(options.port),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: url,
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'error',
      EARSHOT_RATE_LIMIT_PER_KEY: '0',
      EARSHOT_RATE_LIMIT_PER_IP: '0',
      // One bench key drives every connection: its searches in flight are not capped either.
      EARSHOT_SEARCH_PROJECT_CONCURRENCY: '1000',
      ...options.env,
    },
    stdio: ['ignore', process.env.BENCH_LOGS ? 'inherit' : 'ignore', 'inherit'],
  });
  return { child, url };
}
