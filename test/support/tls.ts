import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A throwaway CA and a server certificate it signed, for local https servers in tests. */
export interface TestTls {
  dir: string;
  /** PEM of the CA: trust it in the client (`ca`) or via NODE_EXTRA_CA_CERTS. */
  ca: string;
  cert: string;
  key: string;
  /** The DNS names and IP addresses the server certificate is valid for. */
  names: readonly string[];
}

/** Host names the test certificate covers besides localhost and 127.0.0.1 / ::1. */
export const TEST_HOSTNAMES = ['hooks.earshot.test', 'rebind.earshot.test'] as const;

let cached: TestTls | undefined;

function openssl(args: string[], cwd: string) {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      throw new Error('The openssl CLI is needed to generate test certificates and is not on PATH.');
    throw new Error(`openssl ${args[0]} failed: ${String((error as { stderr?: Buffer }).stderr ?? error)}`);
  }
}

/** Generates (once per process) a CA and a server certificate with the openssl CLI. */
export function testTls(): TestTls {
  if (cached) return cached;
  const dir = mkdtempSync(join(tmpdir(), 'earshot-tls-'));
  const dnsNames = ['localhost', ...TEST_HOSTNAMES];
  const ips = ['127.0.0.1', '::1'];
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl(
    [
      'req',
      '-x509',
      ...ec,
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '2',
      '-subj',
      '/CN=earshot test CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  openssl(['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost'], dir);
  const san = [...dnsNames.map((n) => `DNS:${n}`), ...ips.map((ip) => `IP:${ip}`)].join(',');
  writeFileSync(
    join(dir, 'server.ext'),
    `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=${san}\n`,
  );
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'server.pem',
      '-days',
      '2',
      '-extfile',
      'server.ext',
    ],
    dir,
  );
  cached = {
    dir,
    ca: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    cert: readFileSync(join(dir, 'server.pem'), 'utf8'),
    key: readFileSync(join(dir, 'server.key'), 'utf8'),
    names: [...dnsNames, ...ips],
  };
  return cached;
}
