import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config.ts';
import { ROLES } from '../../src/runtime.ts';

/*
 * No Docker engine runs in CI, so the topology is checked statically: against the Compose
 * Specification's JSON Schema (vendored beside this file, see compose-spec.NOTICE) and against
 * the code it starts (the CLI's roles, the variables src/config.ts reads).
 */

const root = fileURLToPath(new URL('../../', import.meta.url));
const composeText = readFileSync(`${root}docker-compose.yml`, 'utf8');
const schema = JSON.parse(readFileSync(fileURLToPath(new URL('compose-spec.json', import.meta.url)), 'utf8'));

interface Healthcheck {
  test?: string | string[];
  disable?: boolean | string;
}
interface Service {
  image?: string;
  build?: { context?: string; dockerfile_inline?: string };
  command?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  healthcheck?: Healthcheck;
  depends_on?: string[] | Record<string, { condition?: string }>;
  restart?: string;
  ports?: (string | number | { target: number; published?: string | number })[];
}
interface ComposeFile {
  services: Record<string, Service>;
  [key: string]: unknown;
}

/** Compose's interpolation: ${VAR}, ${VAR:-default}, ${VAR-default}, $VAR, and $$ for a literal $. */
function interpolate(text: string, env: Record<string, string | undefined>, seen: Set<string>): string {
  return text.replace(
    /\$(?:\$|\{([A-Za-z_]\w*)(?:(:?-)([^}]*))?\}|([A-Za-z_]\w*))/g,
    (match, braced, op, fallback, bare) => {
      if (match === '$$') return '$';
      const name: string = braced ?? bare;
      seen.add(name);
      const value = env[name];
      if (op === ':-') return value ? value : fallback;
      if (op === '-') return value ?? fallback;
      return value ?? '';
    },
  );
}

function load(text: string, env: Record<string, string | undefined> = {}) {
  const variables = new Set<string>();
  const defaulted = new Set<string>();
  for (const match of text.matchAll(/\$\{([A-Za-z_]\w*):?-[^}]*\}/g)) defaulted.add(match[1]!);
  const compose = parse(interpolate(text, env, variables), { merge: true }) as ComposeFile;
  return { compose, variables, defaulted };
}

const { compose, variables, defaulted } = load(composeText);
const services = compose.services;
const earshotServices = Object.entries(services).filter(([name]) => name.startsWith('earshot-'));

const validate = new Ajv({ allErrors: true, strict: false, validateSchema: false }).compile(schema);
const schemaErrors = (document: unknown) =>
  validate(document) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);

const argv = (command: Service['command']) =>
  Array.isArray(command) ? command.map(String) : (command ?? '').split(/\s+/).filter(Boolean);

const environmentOf = (service: Service): Record<string, string> =>
  Array.isArray(service.environment)
    ? Object.fromEntries(
        service.environment.map((entry) => [entry.split('=')[0]!, entry.split('=').slice(1).join('=')]),
      )
    : Object.fromEntries(
        Object.entries(service.environment ?? {}).map(([key, value]) => [key, String(value ?? '')]),
      );

const dependencies = (service: Service): Record<string, string | undefined> =>
  Array.isArray(service.depends_on)
    ? Object.fromEntries(service.depends_on.map((name) => [name, undefined]))
    : Object.fromEntries(
        Object.entries(service.depends_on ?? {}).map(([name, spec]) => [name, spec.condition]),
      );

/** The variables loadConfig reads, observed by handing it an environment that records each read. */
function variablesReadByConfig(): Set<string> {
  const read = new Set<string>();
  const env = new Proxy({} as NodeJS.ProcessEnv, {
    get(_target, key) {
      if (typeof key === 'string') read.add(key);
      return undefined;
    },
  });
  loadConfig(env);
  return read;
}
/** Variables Node itself reads (docs/channels.md names NODE_EXTRA_CA_CERTS for webhook CAs). */
const NODE_VARIABLES = ['NODE_EXTRA_CA_CERTS', 'NODE_OPTIONS', 'NODE_ENV'];

/** One-shot services: no healthcheck, their dependents wait for them to exit 0. */
const oneShot = new Set(
  Object.values(services).flatMap((service) =>
    Object.entries(dependencies(service))
      .filter(([, condition]) => condition === 'service_completed_successfully')
      .map(([name]) => name),
  ),
);

describe('docker-compose.yml', () => {
  it('is valid against the Compose Specification schema', () => {
    expect(schemaErrors(compose)).toEqual([]);
  });

  it('is rejected by the same schema check when a service has a misspelt key', () => {
    const broken = structuredClone(compose);
    (broken.services['earshot-api'] as Record<string, unknown>).helthcheck = { test: ['CMD', 'true'] };
    expect(schemaErrors(broken).join('\n')).toMatch(/additional properties/);
  });

  it('gives every interpolated variable a default, so a bare `docker compose up` works', () => {
    expect([...variables].filter((name) => !defaulted.has(name))).toEqual([]);
  });

  it('runs api, projector, two matchers and two deliverers as separate earshot services', () => {
    const roles = earshotServices
      .map(([, service]) => argv(service.command))
      .filter((args) => args[0] === 'serve');
    const count = (role: string) => roles.filter((args) => args[2]?.split(',').includes(role)).length;
    expect({
      api: count('api'),
      projector: count('projector'),
      matcher: count('matcher'),
      deliverer: count('deliverer'),
    }).toEqual({
      api: 1,
      projector: 1,
      matcher: 2,
      deliverer: 2,
    });
  });

  it('starts every earshot service with a real CLI command and real roles', () => {
    expect(earshotServices.length).toBeGreaterThan(0);
    for (const [name, service] of earshotServices) {
      const args = argv(service.command);
      if (args[0] === 'migrate') {
        expect(
          args.slice(1).every((arg) => arg === '--json'),
          name,
        ).toBe(true);
        continue;
      }
      expect(args.slice(0, 2), name).toEqual(['serve', '--roles']);
      expect(args, name).toHaveLength(3);
      for (const role of args[2]!.split(',')) expect(ROLES, `${name} role ${role}`).toContain(role);
    }
  });

  it('sets only variables that src/config.ts (or Node) reads on earshot services', () => {
    const known = new Set([...variablesReadByConfig(), ...NODE_VARIABLES]);
    expect(known).toContain('DATABASE_URL');
    for (const [name, service] of earshotServices) {
      const unknown = Object.keys(environmentOf(service)).filter((key) => !known.has(key));
      expect(unknown, name).toEqual([]);
    }
  });

  it('connects every earshot service to the same stores, broker, mail server and secret key', () => {
    const [first, ...rest] = earshotServices.map(([, service]) => environmentOf(service));
    for (const key of [
      'DATABASE_URL',
      'EVENTSTORE_URL',
      'KAFKA_BROKERS',
      'SMTP_URL',
      'EARSHOT_SECRET_KEY',
      'PUBLIC_BASE_URL',
    ]) {
      expect(first?.[key], key).toBeTruthy();
      for (const environment of rest) expect(environment[key], key).toBe(first?.[key]);
    }
    expect(Buffer.from(first!.EARSHOT_SECRET_KEY!, 'base64')).toHaveLength(32);
    const hosts = [
      new URL(first!.DATABASE_URL!).hostname,
      new URL(first!.EVENTSTORE_URL!).hostname,
      new URL(first!.SMTP_URL!).hostname,
      ...first!.KAFKA_BROKERS!.split(',').map((broker) => broker.split(':')[0]!),
    ];
    for (const host of hosts) expect(Object.keys(services), host).toContain(host);
  });

  it('gives every long-running service a healthcheck', () => {
    for (const [name, service] of Object.entries(services)) {
      if (oneShot.has(name)) {
        expect(service.restart, `${name} is one-shot`).toBe('no');
        continue;
      }
      const disabled = service.healthcheck?.disable === true || service.healthcheck?.disable === 'true';
      const test = argv(service.healthcheck?.test);
      expect(disabled, name).toBe(false);
      expect(['CMD', 'CMD-SHELL'], `${name} healthcheck`).toContain(test[0]);
    }
  });

  it('checks the api and every role on /readyz', () => {
    for (const [name, service] of earshotServices) {
      if (oneShot.has(name)) continue;
      const test = argv(service.healthcheck?.test);
      expect(test.join(' '), name).toContain('/readyz');
      // The check is a `node -e` script (the slim image has no curl): it must at least compile.
      if (test[1] === 'node' && test[2] === '-e') expect(() => new Script(test[3]!), name).not.toThrow();
    }
  });

  it('starts earshot services only after what they depend on is healthy or, for one-shots, done', () => {
    for (const [name, service] of earshotServices) {
      for (const [dependency, condition] of Object.entries(dependencies(service))) {
        expect(Object.keys(services), `${name} depends on ${dependency}`).toContain(dependency);
        expect(condition, `${name} → ${dependency}`).toBe(
          oneShot.has(dependency) ? 'service_completed_successfully' : 'service_healthy',
        );
      }
    }
    const api = dependencies(services['earshot-api']!);
    expect(Object.keys(api).sort()).toEqual(['earshot-migrate', 'kafka', 'kurrentdb', 'mailpit', 'postgres']);
  });

  it('builds the earshot image from folders that exist and publishes the API port', () => {
    const dockerfile = services['earshot-api']?.build?.dockerfile_inline ?? '';
    const copied = [...dockerfile.matchAll(/^COPY (.+) \S+$/gm)].flatMap((match) => match[1]!.split(' '));
    expect(copied).toEqual(expect.arrayContaining(['package.json', 'package-lock.json', 'src', 'schemas']));
    for (const path of copied) expect(existsSync(`${root}${path}`), path).toBe(true);
    expect(services['earshot-api']?.ports?.map(String)).toEqual(['8080:8080']);
  });
});
