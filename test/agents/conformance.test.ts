import { spawn } from 'node:child_process';
import { createServer, request as forward, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type AgentsHarness, agentsHarness } from './support.ts';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const RUNNER = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url),
);

let h: AgentsHarness;
let keyAdder: Server;
let url: string;

beforeAll(async () => {
  h = await agentsHarness();
  // The runner's client sends no credential: this local hop adds the project key, as a configured
  // client would, and passes everything else (Host and Origin included) through unchanged.
  const target = new URL(h.mcpUrl);
  keyAdder = createServer((request, response) => {
    const upstream = forward(
      {
        host: target.hostname,
        port: target.port,
        path: request.url,
        method: request.method,
        headers: { ...request.headers, 'x-api-key': h.tenant.key },
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => keyAdder.listen(0, '127.0.0.1', resolve));
  url = `http://localhost:${(keyAdder.address() as AddressInfo).port}/mcp`;
});
afterAll(async () => {
  keyAdder.close();
  await h.close();
});

it('passes the official conformance runner in server mode, except the scenarios listed with reasons', async () => {
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        here('./conformance/node20.mjs'),
        RUNNER,
        'server',
        '--url',
        url,
        '--suite',
        'all',
        '--expected-failures',
        here('./conformance/expected-failures.yml'),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('close', (exitCode) => resolve({ code: exitCode, output }));
  });
  expect(output).toContain('Baseline check passed');
  for (const scenario of [
    'server-initialize',
    'ping',
    'tools-list',
    'tools-call-error',
    'dns-rebinding-protection',
  ])
    expect(output).toMatch(new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`));
  expect(code, output.slice(-3000)).toBe(0);
}, 120_000);
