import { performance } from 'node:perf_hooks';
import { setImmediate } from 'node:timers/promises';
import { type AllowList, checkWebhookUrl, type Resolve, type UrlCheck } from './address-rule.ts';
import { oneOffPool, type PoolKey, type WebhookPools } from './pools.ts';
import { parseRetryAfter } from './retry-after.ts';
import { webhookSignatureHeaders } from './signature.ts';

export { pinnedLookup } from './pinned-lookup.ts';

export const WEBHOOK_TIMEOUT_MS = 15_000;

export interface WebhookRequest {
  url: string;
  /** The delivery id: webhook-id, the same on every retry. */
  deliveryId: string;
  /** The exact JSON text to POST. */
  body: string;
  /** The connection's `whsec_…` secret. */
  secret: string;
}

export interface WebhookSenderOptions {
  /** EARSHOT_WEBHOOK_ALLOW_CIDRS, parsed. */
  allow?: AllowList;
  resolve?: Resolve;
  /** The whole attempt (resolution, connect, response); default 15 000 ms. */
  timeoutMs?: number;
  /** Trust roots replacing Node's (tests); by default Node's roots plus NODE_EXTRA_CA_CERTS. */
  ca?: string | Buffer | Array<string | Buffer>;
  now?: () => Date;
  userAgent?: string;
  /**
   * Keep-alive pools shared by sends (createWebhookPools); without them every send opens its own
   * connection and closes it afterwards.
   */
  pools?: WebhookPools;
}

export interface WebhookOutcome {
  ok: boolean;
  status?: number;
  retryAfterMs?: number;
  /** Why the attempt failed, fit for error_message. */
  error?: string;
  retryable: boolean;
  durationMs: number;
  /** The address the request went to (after the URL rule). */
  address?: string;
}

/**
 * Whether a response status is worth another attempt: 408, 429 and 5xx are; a redirect or any
 * other 4xx answers the same way next time, so it is permanent.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

const SNIPPET_BYTES = 300;

async function readSnippet(body: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= SNIPPET_BYTES) break;
  }
  // Control characters (NUL included) become spaces: the snippet is recorded in the delivery's events.
  return Buffer.concat(chunks)
    .subarray(0, SNIPPET_BYTES)
    .toString('utf8')
    .replace(/[\s\p{Cc}]+/gu, ' ')
    .trim();
}

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause : undefined;
  const code = (error as NodeJS.ErrnoException).code ?? (cause as NodeJS.ErrnoException | undefined)?.code;
  const message = cause && error.message === 'fetch failed' ? cause.message : error.message;
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

function rejected(check: Exclude<UrlCheck, { ok: true }>, durationMs: number): WebhookOutcome {
  // A name that does not resolve right now may resolve later; an address that is not public
  // or a URL that breaks the rule will not fix itself.
  return { ok: false, error: check.message, retryable: check.reason === 'unresolvable', durationMs };
}

/**
 * Makes one attempt: applies the URL rule, then POSTs the body, signed, to the checked address
 * (never re-resolving the name), without following redirects.
 */
export async function sendWebhook(
  req: WebhookRequest,
  options: WebhookSenderOptions = {},
): Promise<WebhookOutcome> {
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const now = options.now ?? (() => new Date());
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);

  const check = await checkWebhookUrl(req.url, {
    ...(options.allow && { allow: options.allow }),
    ...(options.resolve && { resolve: options.resolve }),
    resolveTimeoutMs: Math.min(timeoutMs, 5_000),
  });
  if (!check.ok) return rejected(check, elapsed());

  const remaining = Math.max(1, timeoutMs - elapsed());
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), remaining);
  // The pool is chosen by this send's own check: same origin, same addresses, same trust roots.
  const key: PoolKey = {
    origin: check.url.origin,
    hostname: check.hostname,
    addresses: check.addresses,
    ...(options.ca !== undefined && { ca: options.ca }),
    connectTimeoutMs: timeoutMs,
  };
  const lease = options.pools ? options.pools.acquire(key) : oneOffPool(key);
  const address = check.addresses[0]?.address;
  const base = (): Pick<WebhookOutcome, 'durationMs' | 'address'> =>
    address === undefined ? { durationMs: elapsed() } : { durationMs: elapsed(), address };

  try {
    // A Pool never follows redirects: a 3xx comes back as the answer.
    const response = await lease.pool.request({
      path: `${check.url.pathname}${check.url.search}`,
      method: 'POST',
      signal: controller.signal,
      headersTimeout: remaining,
      bodyTimeout: remaining,
      headers: {
        'content-type': 'application/json',
        'user-agent': options.userAgent ?? 'earshot-webhooks/1',
        ...webhookSignatureHeaders(req.secret, req.deliveryId, req.body, now()),
      },
      body: req.body,
    });
    const status = response.statusCode;
    if (status >= 200 && status < 300) {
      // The receiver has accepted; what it sends after the status does not change that.
      await response.body.dump().catch(() => undefined);
      // undici marks the connection free on a later tick; a send that follows at once reuses it.
      await setImmediate();
      return { ok: true, status, retryable: false, ...base() };
    }
    const snippet = await readSnippet(response.body);

    const retryAfterMs = parseRetryAfter(response.headers['retry-after'], now());
    let error: string;
    if (status >= 300 && status < 400) {
      const location = response.headers.location;
      error = `HTTP ${status}: redirect${location ? ` to ${String(location)}` : ''} not followed; webhook URLs must answer directly`;
    } else {
      error = `HTTP ${status}${snippet ? `: ${snippet}` : ''}`;
    }
    return {
      ok: false,
      status,
      error,
      retryable: isRetryableStatus(status),
      ...(retryAfterMs !== undefined && { retryAfterMs }),
      ...base(),
    };
  } catch (error) {
    const message = controller.signal.aborted ? `timed out after ${timeoutMs} ms` : describeError(error);
    return { ok: false, error: message, retryable: true, ...base() };
  } finally {
    clearTimeout(timer);
    await lease.release();
  }
}
