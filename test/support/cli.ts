import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TEST_DATABASE_URL } from './db.ts';

export const EARSHOT_BIN = fileURLToPath(new URL('../../src/cli/earshot.js', import.meta.url));

/** DATABASE_URL for a child process that must work in one test schema. */
export const schemaUrl = (schema: string) =>
  `${TEST_DATABASE_URL}${TEST_DATABASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema},public`)}`;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `earshot …` as a real child process. */
export function runCli(
  args: string[],
  env: Record<string, string | undefined>,
  input?: string,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [EARSHOT_BIN, ...args], {
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}
