import { createHash } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RateLimitConfig } from '../config.ts';
import { EarshotError } from '../errors.ts';
import { type AuthMode, presentedKey } from './auth.ts';

/** 429: the caller spent its requests for the current window. */
class RateLimitedError extends EarshotError {
  readonly status = 429;
}

/** Probes and scrapes are never limited: an orchestrator must always reach them. */
const UNLIMITED = new Set(['/healthz', '/readyz', '/metrics']);

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

/**
 * Requests per window, counted in this process (docs/api-conventions.md, Rate limits): per API key
 * (by the key's SHA-256, never the key) where a route reads keys and one is presented, otherwise
 * per client address. Runs before authentication, so refused callers cost no key lookup.
 */
export async function rateLimits(app: FastifyInstance, config: RateLimitConfig) {
  await app.register(rateLimit, { global: false, cache: 10_000 });
  const limiter = (max: number, keyGenerator: (request: FastifyRequest) => string) =>
    max > 0 ? app.createRateLimit({ max, timeWindow: config.windowMs, keyGenerator }) : undefined;
  const perKey = limiter(config.perKey, (request) => `key:${sha256(presentedKey(request) ?? '')}`);
  const perAddress = limiter(config.perAddress, (request) => `address:${request.ip}`);
  const seconds = config.windowMs / 1000;

  app.addHook('onRequest', async (request, reply) => {
    const route = request.routeOptions.url;
    if (route !== undefined && UNLIMITED.has(route)) return;
    // An MCP tool's route call: its /mcp request was counted already.
    if (app.isDelegated(request)) return;
    const mode: AuthMode = request.routeOptions.config?.auth ?? (route ? 'project' : 'public');
    const keyed = mode !== 'public' && presentedKey(request) !== undefined;
    const limit = keyed ? perKey : perAddress;
    if (!limit) return;
    const result = await limit(request);
    if (result.isAllowed) return;
    reply.header('ratelimit-limit', result.max);
    reply.header('ratelimit-remaining', result.remaining);
    reply.header('ratelimit-reset', result.ttlInSeconds);
    if (!result.isExceeded) return;
    reply.header('retry-after', result.ttlInSeconds);
    throw new RateLimitedError(
      'rate_limit_exceeded',
      `More than ${result.max} requests in ${seconds} s ${keyed ? 'with this API key' : 'from this address'}; retry in ${result.ttlInSeconds} s.`,
    );
  });
}
