import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { schemaUrl } from '../support/cli.ts';
import { createTestDb, type TestDb } from '../support/db.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

async function within(ms: number, check: () => Promise<boolean> | boolean): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(50);
  }
  return check();
}

const cmdline = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
};

/** The children of pid, their children, and so on. */
function descendantsOf(pid: number): number[] {
  let listed = '';
  try {
    listed = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' });
  } catch {
    // ps exits 1 when pid has no children.
  }
  const children = listed
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter((child) => child > 0);
  return children.flatMap((child) => [child, ...descendantsOf(child)]);
}

describe('npm start under a process manager', () => {
  let testDb: TestDb | undefined;
  let started: number[] = [];
  let dataDir: string | undefined;
  afterEach(async () => {
    for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL');
    started = [];
    await testDb?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('stops the server when npm gets SIGTERM, leaving no process and no open port', async () => {
    testDb = await createTestDb({ migrated: false });
    dataDir = mkdtempSync(join(tmpdir(), 'earshot-npm-start-'));
    const port = await freePort();
    const npm = spawn('npm', ['start'], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: schemaUrl(testDb.schema),
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    npm.stdout.on('data', (chunk) => {
      output += chunk;
    });
    npm.stderr.on('data', (chunk) => {
      output += chunk;
    });
    const npmExited = new Promise((resolve) => npm.once('exit', resolve));

    const healthy = await within(30_000, async () => {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
      return response?.ok === true;
    });
    expect(healthy, output).toBe(true);
    started = descendantsOf(npm.pid!);
    const server = started.filter((pid) => /node\0src\/cli\/earshot\.js\0serve/.test(cmdline(pid)));
    expect(server, output).toHaveLength(1);

    npm.kill('SIGTERM');
    expect(await within(5_000, () => !started.some(alive)), output).toBe(true);
    expect(await within(1_000, async () => !(await portOpen(port)))).toBe(true);
    await npmExited;
  });
});
