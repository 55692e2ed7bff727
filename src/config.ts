import { resolve } from 'node:path';
import { SEARCH_PROJECT_CONCURRENCY } from './search/in-flight.ts';
import { SEARCH_STATEMENT_TIMEOUT_MS } from './search/statement-timeout.ts';
import { decodeKey } from './secret-key.ts';
import type { SlotLimits } from './work-slots.ts';

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
  /** EARSHOT_OAUTH_CLIENT_METADATA_ALLOW_CIDRS: private ranges client metadata documents may be fetched from (docs/agents.md). */
  oauthClientMetadataAllowCidrs: string[];
  logLevel: string;
  /** Alert preview sweeps (docs/matching-pipeline.md, Previews). */
  previewLimits: SlotLimits;
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
  /** EARSHOT_CATALOG_CACHE_MB: megabytes of catalog answers kept per process, 0 for none (docs/catalog.md). */
  catalogCacheMb: number;
  /** EARSHOT_CATALOG_TRANSCRIPTS_MB: megabytes of whole transcripts and their renderings kept per process, 0 for none (docs/catalog.md). */
  catalogTranscriptsMb: number;
  /** EARSHOT_CATALOG_ITEMS_MB: megabytes of rendered podcast items kept per process, 0 for none (docs/catalog.md). */
  catalogItemsMb: number;
  /** EARSHOT_CATALOG_LIST_MB: megabytes of the list index kept per process, 0 for none (docs/catalog.md, "The list index"). */
  catalogListMb: number;
  /** Pay per request (docs/payments.md): on when EARSHOT_X402_PAY_TO is set. */
  x402: X402Config | undefined;
  /** EARSHOT_SEMANTIC_SEARCH=off: this process neither embeds nor loads the vector index (docs/semantic-search.md). */
  semanticSearch: boolean;
  /** EARSHOT_SEARCH_STATEMENT_TIMEOUT_MS: the longest a search route's statement may run, 0 for no limit (docs/search.md). */
  searchStatementTimeoutMs: number;
  /** EARSHOT_SEARCH_PROJECT_CONCURRENCY: search requests of one project or x402 payer at once per process (docs/search.md). */
  searchProjectConcurrency: number;
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

/**
 * Where keyless callers pay: the recipient wallet, the network, the token and its EIP-712 domain.
 * The token is the network's USDC when not given (src/payments/x402.ts resolves it at start-up).
 */
export interface X402Config {
  payTo: string;
  /** CAIP-2, e.g. eip155:8453 (Base). */
  network: `${string}:${string}`;
  asset?: { address: string; name: string; version: string; decimals: number };
  facilitatorUrl: string;
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
    oauthClientMetadataAllowCidrs: list(env.EARSHOT_OAUTH_CLIENT_METADATA_ALLOW_CIDRS) ?? [],
    logLevel: env.LOG_LEVEL ?? 'info',
    previewLimits: {
      perProcess: count(env, 'EARSHOT_PREVIEW_CONCURRENCY', 4, 1, 1000),
      perKey: count(env, 'EARSHOT_PREVIEW_PROJECT_CONCURRENCY', 2, 1, 1000),
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
    catalogCacheMb: count(env, 'EARSHOT_CATALOG_CACHE_MB', 64, 0, 65_536),
    catalogTranscriptsMb: count(env, 'EARSHOT_CATALOG_TRANSCRIPTS_MB', 64, 0, 65_536),
    catalogItemsMb: count(env, 'EARSHOT_CATALOG_ITEMS_MB', 32, 0, 65_536),
    catalogListMb: count(env, 'EARSHOT_CATALOG_LIST_MB', 64, 0, 65_536),
    x402: x402Config(env),
    searchStatementTimeoutMs: count(
      env,
      'EARSHOT_SEARCH_STATEMENT_TIMEOUT_MS',
      SEARCH_STATEMENT_TIMEOUT_MS,
      0,
      3_600_000,
    ),
    searchProjectConcurrency: count(
      env,
      'EARSHOT_SEARCH_PROJECT_CONCURRENCY',
      SEARCH_PROJECT_CONCURRENCY,
      1,
      1000,
    ),
  };
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

function x402Config(env: NodeJS.ProcessEnv): X402Config | undefined {
  const payTo = env.EARSHOT_X402_PAY_TO;
  if (!payTo) return undefined;
  if (!ADDRESS.test(payTo)) throw new Error(`EARSHOT_X402_PAY_TO must be a 0x wallet address, got ${payTo}`);
  const network = env.EARSHOT_X402_NETWORK || 'eip155:8453';
  if (!/^eip155:\d+$/.test(network))
    throw new Error(`EARSHOT_X402_NETWORK must be an EVM network as eip155:<chain id>, got ${network}`);
  const asset = env.EARSHOT_X402_ASSET;
  if (asset !== undefined && asset !== '' && !ADDRESS.test(asset))
    throw new Error(`EARSHOT_X402_ASSET must be the token's 0x address, got ${asset}`);
  const name = env.EARSHOT_X402_ASSET_NAME;
  const version = env.EARSHOT_X402_ASSET_VERSION;
  if (asset && (!name || !version))
    throw new Error(
      'EARSHOT_X402_ASSET needs EARSHOT_X402_ASSET_NAME and EARSHOT_X402_ASSET_VERSION (the EIP-712 domain of the token)',
    );
  const facilitatorUrl = env.EARSHOT_X402_FACILITATOR_URL;
  if (!facilitatorUrl || !URL.canParse(facilitatorUrl))
    throw new Error(
      'EARSHOT_X402_FACILITATOR_URL (the x402 facilitator that verifies and settles) is needed with EARSHOT_X402_PAY_TO',
    );
  return {
    payTo,
    network: network as `${string}:${string}`,
    ...(asset && name && version
      ? {
          asset: {
            address: asset,
            name,
            version,
            decimals: count(env, 'EARSHOT_X402_ASSET_DECIMALS', 6, 2, 36),
          },
        }
      : {}),
    facilitatorUrl: facilitatorUrl.replace(/\/+$/, ''),
  };
}
