import { resolve } from 'node:path';
import { decodeKey } from './secret-key.ts';

/** Every environment variable earshot reads (README.md, Configuration), parsed once. */
export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  eventstoreUrl: string | undefined;
  kafkaBrokers: string[] | undefined;
  publicBaseUrl: string;
  smtpUrl: string | undefined;
  smtpFrom: string;
  slackApiUrl: string | undefined;
  secretKey: string | undefined;
  /** Keys that were EARSHOT_SECRET_KEY before a rotation: still accepted, never used for new values. */
  previousSecretKeys: Buffer[];
  retrySchedule: string;
  webhookAllowCidrs: string[];
  logLevel: string;
  /** Alert preview sweeps (docs/matching-pipeline.md, Previews). */
  previewLimits: { perProcess: number; perProject: number; queue: number };
  /** Requests per window per API key, and per client address where no key counts (0 = no limit). */
  rateLimit: RateLimitConfig;
  /** Proxies whose X-Forwarded-For names the client address (addresses or CIDRs); none by default. */
  trustProxy: string[];
  /** EARSHOT_SNAPSHOT_INTERVAL: how often the leaderboard snapshots are refreshed (default 10m). */
  snapshotInterval: string;
  /** EARSHOT_OAUTH_SIGNING_KEY: a PKCS#8 PEM private key signing OAuth access tokens (docs/agents.md). */
  oauthSigningKey: string | undefined;
  /** EARSHOT_EMBEDDINGS_*: an OpenAI-compatible embeddings API; unset = the built-in model (docs/semantic-search.md). */
  embeddings: EmbeddingsConfig | undefined;
  /** EARSHOT_SEMANTIC_SEARCH=off: this process neither embeds nor loads the vector index (docs/semantic-search.md). */
  semanticSearch: boolean;
}

export interface EmbeddingsConfig {
  url: string;
  model: string;
  apiKey: string | undefined;
  minSimilarity: number;
}

function embeddingsConfig(env: NodeJS.ProcessEnv): EmbeddingsConfig | undefined {
  const url = env.EARSHOT_EMBEDDINGS_URL || undefined;
  if (url === undefined) return undefined;
  if (!/^https?:\/\//.test(url)) throw new Error(`EARSHOT_EMBEDDINGS_URL must be an http(s) URL, got ${url}`);
  const model = env.EARSHOT_EMBEDDINGS_MODEL;
  if (!model) throw new Error('EARSHOT_EMBEDDINGS_MODEL is required with EARSHOT_EMBEDDINGS_URL');
  const minSimilarity = Number(env.EARSHOT_EMBEDDINGS_MIN_SIMILARITY ?? 0.2);
  if (!(minSimilarity >= -1 && minSimilarity <= 1))
    throw new Error(
      `EARSHOT_EMBEDDINGS_MIN_SIMILARITY must be from -1 to 1, got ${env.EARSHOT_EMBEDDINGS_MIN_SIMILARITY}`,
    );
  return { url, model, apiKey: env.EARSHOT_EMBEDDINGS_API_KEY || undefined, minSimilarity };
}

function semanticSearchOn(value: string | undefined): boolean {
  if (value === undefined || value === '' || value === 'on') return true;
  if (value === 'off') return false;
  throw new Error(`EARSHOT_SEMANTIC_SEARCH must be on or off, got ${value}`);
}

export interface RateLimitConfig {
  perKey: number;
  perAddress: number;
  windowMs: number;
}

export const DEFAULT_RATE_LIMIT: RateLimitConfig = { perKey: 1200, perAddress: 300, windowMs: 60_000 };

export const DEFAULT_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,10h';

const list = (value: string | undefined) =>
  value
    ?.split(',')
    .map((item) => item.trim())
    .filter(Boolean);

const count = (env: NodeJS.ProcessEnv, name: string, fallback: number, minimum: number, maximum: number) => {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < minimum || value > maximum)
    throw new Error(`${name} must be a whole number from ${minimum} to ${maximum}, got ${text}`);
  return value;
};

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = Number(env.PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`PORT must be a port number, got ${env.PORT}`);
  return {
    port,
    host: env.HOST ?? '0.0.0.0',
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: resolve(env.DATA_DIR ?? './data'),
    eventstoreUrl: env.EVENTSTORE_URL || undefined,
    kafkaBrokers: list(env.KAFKA_BROKERS)?.length ? list(env.KAFKA_BROKERS) : undefined,
    publicBaseUrl: (env.PUBLIC_BASE_URL ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    smtpUrl: env.SMTP_URL || undefined,
    smtpFrom: env.SMTP_FROM ?? 'earshot <alerts@earshot.localhost>',
    slackApiUrl: env.SLACK_API_URL || undefined,
    secretKey: env.EARSHOT_SECRET_KEY || undefined,
    previousSecretKeys: (list(env.EARSHOT_PREVIOUS_SECRET_KEYS) ?? []).map((key, i) =>
      decodeKey(key, `EARSHOT_PREVIOUS_SECRET_KEYS (key ${i + 1})`),
    ),
    retrySchedule: env.EARSHOT_RETRY_SCHEDULE ?? DEFAULT_RETRY_SCHEDULE,
    webhookAllowCidrs: list(env.EARSHOT_WEBHOOK_ALLOW_CIDRS) ?? [],
    logLevel: env.LOG_LEVEL ?? 'info',
    previewLimits: {
      perProcess: count(env, 'EARSHOT_PREVIEW_CONCURRENCY', 4, 1, 1000),
      perProject: count(env, 'EARSHOT_PREVIEW_PROJECT_CONCURRENCY', 2, 1, 1000),
      queue: count(env, 'EARSHOT_PREVIEW_QUEUE', 8, 0, 1000),
    },
    rateLimit: {
      // 0 turns a limit off.
      perKey: count(env, 'EARSHOT_RATE_LIMIT_PER_KEY', DEFAULT_RATE_LIMIT.perKey, 0, 1_000_000),
      perAddress: count(env, 'EARSHOT_RATE_LIMIT_PER_IP', DEFAULT_RATE_LIMIT.perAddress, 0, 1_000_000),
      windowMs: DEFAULT_RATE_LIMIT.windowMs,
    },
    trustProxy: list(env.EARSHOT_TRUST_PROXY) ?? [],
    snapshotInterval: env.EARSHOT_SNAPSHOT_INTERVAL ?? '10m',
    oauthSigningKey: env.EARSHOT_OAUTH_SIGNING_KEY || undefined,
    embeddings: embeddingsConfig(env),
    semanticSearch: semanticSearchOn(env.EARSHOT_SEMANTIC_SEARCH),
  };
}
