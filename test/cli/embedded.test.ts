import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { EARSHOT_BIN, runCli } from '../support/cli.ts';

/** Starts `earshot serve` with embedded storage and resolves once /readyz answers 200. */
async function serve(dataDir: string, port: number) {
  const child = spawn(process.execPath, [EARSHOT_BIN, 'serve'], {
    env: {
      ...process.env,
      DATABASE_URL: '',
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const started = Date.now();
  let healthyAfterMs: number | undefined;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`serve exited: ${stderr}`);
    const health = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
    if (health?.ok && healthyAfterMs === undefined) healthyAfterMs = Date.now() - started;
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
    if (ready?.ok) break;
    if (Date.now() - started > 60_000) throw new Error(`serve not ready: ${stderr}`);
    await sleep(100);
  }
  return {
    healthyAfterMs: healthyAfterMs!,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

describe('embedded storage (PGlite in DATA_DIR)', () => {
  it('keeps what one process wrote for the next, and refuses a second process while one holds it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'earshot-embedded-'));
    const env = { DATABASE_URL: '', DATA_DIR: dataDir };
    const org = await runCli(['org', 'create', '--name', 'Acme', '--plan', 'TEAM', '--json'], env);
    expect(org.code).toBe(0);
    const { id } = JSON.parse(org.stdout);

    const port = 18000 + Math.floor(Math.random() * 1000);
    const server = await serve(dataDir, port);
    expect(server.healthyAfterMs).toBeLessThan(10_000);
    const refused = await runCli(['project', 'create', '--org', id, '--name', 'Main', '--json'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/in use by another earshot process/);
    expect(await server.stop()).toBe(0);

    const project = await runCli(['project', 'create', '--org', id, '--name', 'Main', '--json'], env);
    expect(project.code).toBe(0);
    expect(JSON.parse(project.stdout).organization_id).toBe(id);
  }, 120_000);
});

describe('earshot serve stopped while it is still starting', () => {
  it('finishes starting, drains and exits 0 on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'earshot-starting-'));
    const port = 19500 + Math.floor(Math.random() * 400);
    const child = spawn(process.execPath, [EARSHOT_BIN, 'serve'], {
      env: {
        ...process.env,
        DATABASE_URL: '',
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    // Liveness answers at once; readiness waits for the embedded database.
    for (;;) {
      const health = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
      if (health?.ok) break;
      await sleep(50);
    }
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(503);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 120_000);
});
