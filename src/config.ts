import { resolve } from 'node:path';
import { decodeKey } from './secret-key.ts';

/** Every environment variable earshot reads (contracts.md §1), parsed once. */
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
  /** EARSHOT_OAUTH_SIGNING_KEY: a PKCS#8 PEM private key signing OAuth access tokens (docs/agents.md). */
  oauthSigningKey: string | undefined;
}

export const DEFAULT_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,10h';

const list = (value: string | undefined) =>
  value
    ?.split(',')
    .map((item) => item.trim())
    .filter(Boolean);

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
    oauthSigningKey: env.EARSHOT_OAUTH_SIGNING_KEY || undefined,
  };
}
