import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { type AllowList, checkWebhookUrl, type Resolve, systemResolve } from '../../webhooks/address-rule.ts';
import { oneOffPool } from '../../webhooks/pools.ts';
import type { MetadataDocumentClient } from './store.ts';

/**
 * OAuth Client ID Metadata Documents (docs/agents.md): a client_id that is the https URL of a JSON
 * document the client publishes. earshot fetches it under the webhook URL rule (https only, public
 * addresses only, connecting to exactly the checked addresses), within a timeout and a size cap,
 * without following redirects, and keeps a valid document per process for as long as its cache
 * headers say, within bounds. Errors and invalid documents are never cached.
 */

/** The draft's recommended ceiling on a document (draft-ietf-oauth-client-id-metadata-document §6.6). */
export const METADATA_MAX_BYTES = 5 * 1024;
export const METADATA_TIMEOUT_MS = 5_000;
/** Bounds on how long a fetched document is kept, whatever its cache headers say. */
export const METADATA_CACHE_MIN_SECONDS = 60;
export const METADATA_CACHE_MAX_SECONDS = 24 * 3600;
/** Kept this long when the response carries no freshness information. */
export const METADATA_CACHE_DEFAULT_SECONDS = 5 * 60;
const CACHE_ENTRIES = 1000;
/** Documents fetched at once per process; authorization requests beyond wait for nothing: refused. */
export const METADATA_CONCURRENT_FETCHES = 16;
const MAX_REDIRECT_URIS = 10;

/**
 * Characters that could disguise a client's name on the consent page: controls, format characters
 * (bidirectional overrides and isolates, zero-width marks; the joiners U+200C and U+200D that
 * scripts and emoji need excepted), line and paragraph separators, lone surrogates.
 */
export const HIDDEN_CHARACTER = /(?![\u200C\u200D])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

/** A redirect URI earshot accepts from a client: https, http on a loopback host, or a private-use scheme; no fragment. */
export function validRedirectUri(value: unknown) {
  if (typeof value !== 'string' || value.length > 2000 || !URL.canParse(value)) return false;
  const url = new URL(value);
  if (url.hash) return false;
  if (url.protocol === 'https:') return true;
  if (url.protocol === 'http:') return LOOPBACK_HOSTS.includes(url.hostname);
  // Native apps' private-use schemes (com.example.app:/callback).
  return /^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(url.protocol);
}

/**
 * Whether a client_id is meant as a metadata document URL. Registered clients' ids start with
 * `oc_`, so anything http(s) is judged here, and refused here when it breaks the rule.
 */
export const isMetadataClientId = (clientId: string) => /^https?:\/\//i.test(clientId);

/** The host (with a port other than 443) that identifies a metadata-document client to a human. */
export const clientIdHost = (clientId: string) => new URL(clientId).host;

export interface ClientMetadataOptions {
  /** EARSHOT_OAUTH_CLIENT_METADATA_ALLOW_CIDRS, parsed: private ranges documents may come from. */
  allow?: AllowList;
  resolve?: Resolve;
  /** Trust roots replacing Node's (tests); by default Node's roots plus NODE_EXTRA_CA_CERTS. */
  ca?: string | Buffer | Array<string | Buffer>;
  /** The whole fetch: resolution, connect, response; default 5 000 ms. */
  timeoutMs?: number;
  /** Largest document accepted; default 5 KiB. */
  maxBytes?: number;
  /** Distinct documents fetched at once; default 16. Anyone can start a fetch, so it is bounded. */
  maxConcurrentFetches?: number;
  now(): Date;
}

export type MetadataResult =
  | {
      ok: true;
      client: MetadataDocumentClient;
      /** Fetched for this call, not served from the cache. */
      fetched: boolean;
    }
  | {
      ok: false;
      message: string;
      /** earshot's own fetch bound refused it: nothing is known about the client (no invalid_client). */
      busy?: true;
    };

export interface ClientMetadataResolver {
  /** The client a metadata document URL names: from the cache while fresh, else fetched and checked. */
  resolve(clientId: string): Promise<MetadataResult>;
}

const failure = (message: string): { ok: false; message: string } => ({ ok: false, message });

/** The characters of an RFC 3986 URI reference: unreserved, reserved and `%`. */
const URI_CHARACTERS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;

/** The rules of a Client Identifier URL (draft §3); the reason it breaks one, or undefined. */
export function clientIdUrlProblem(clientId: string): string | undefined {
  if (clientId.length > 2000) return 'client_id is longer than 2000 characters.';
  // Only RFC 3986 characters: the URL parser reads a backslash as "/" and drops tabs and
  // newlines, so `/a\\..\\b` or `/a/.<TAB>./b` would pass the segment rule below as written and be
  // fetched as `/b`, a document elsewhere on the host.
  if (!URI_CHARACTERS.test(clientId))
    return 'client_id holds characters a URL may not hold (RFC 3986): a space, control character, backslash or non-ASCII character; percent-encode them, and write an internationalized host name in its xn-- form.';
  if (!URL.canParse(clientId)) return 'client_id is not a valid URL.';
  const url = new URL(clientId);
  if (url.protocol !== 'https:')
    return `client_id must be an https URL to be used as a client metadata document, not ${url.protocol.replace(/:$/, '')}.`;
  // Compared as an exact string, stored under a check that it starts with `https://`: a client
  // writes the scheme as RFC 3986 normalizes it (lower case), or its row could not be kept.
  if (!clientId.startsWith('https://'))
    return 'client_id must begin with https:// in lower case, as RFC 3986 normalizes a scheme.';
  if (url.username !== '' || url.password !== '')
    return 'client_id must not contain a user name or password.';
  if (clientId.includes('#')) return 'client_id must not contain a fragment.';
  const path = clientId.replace(/^https:\/\/[^/?#]*/i, '').split('?')[0] ?? '';
  if (path === '' || path === '/')
    return 'client_id must contain a path, such as https://app.example/oauth/client.json.';
  const dotSegment = (segment: string) => /^(?:\.|%2e){1,2}$/i.test(segment);
  if (path.split('/').some(dotSegment)) return 'client_id must not contain "." or ".." path segments.';
  return undefined;
}

/** Seconds a document may be kept: max-age, else Expires, else the default; always within the bounds. */
export function cacheLifetimeSeconds(headers: IncomingHttpHeaders, now: Date) {
  const directives = String(headers['cache-control'] ?? '')
    .toLowerCase()
    .split(',')
    .map((d) => d.trim());
  let seconds: number | undefined;
  if (directives.includes('no-store') || directives.includes('no-cache')) seconds = 0;
  else {
    const maxAge = directives.find((d) => d.startsWith('max-age='));
    const value = maxAge ? Number(maxAge.slice('max-age='.length).replace(/^"|"$/g, '')) : Number.NaN;
    if (Number.isFinite(value) && value >= 0) seconds = value - (Number(headers.age) || 0);
    else if (typeof headers.expires === 'string') {
      const expires = Date.parse(headers.expires);
      const date = typeof headers.date === 'string' ? Date.parse(headers.date) : now.getTime();
      seconds = Number.isNaN(expires) ? 0 : (expires - (Number.isNaN(date) ? now.getTime() : date)) / 1000;
    }
  }
  return Math.min(
    METADATA_CACHE_MAX_SECONDS,
    Math.max(METADATA_CACHE_MIN_SECONDS, Math.floor(seconds ?? METADATA_CACHE_DEFAULT_SECONDS)),
  );
}

const isJsonType = (contentType: unknown) => {
  const media = String(contentType ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  return media === 'application/json' || /^application\/[a-z0-9.!#$&^_-]+\+json$/.test(media);
};

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code;
  return code && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const stringList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');

/**
 * Control characters (C0, DEL, C1): the URL parser drops or escapes them, so the string would name another URL,
 * and PostgreSQL text cannot hold a NUL. A document's URIs with one are not kept.
 */
const CONTROL_CHARACTER = /\p{Cc}/u;

const httpsUrlOrNull = (value: unknown) =>
  typeof value === 'string' &&
  value.length <= 2000 &&
  !CONTROL_CHARACTER.test(value) &&
  URL.canParse(value) &&
  new URL(value).protocol === 'https:'
    ? value
    : null;

/** Checks a fetched document against its URL (draft §4, §4.1): the client, or why it is refused. */
export function parseMetadataDocument(
  clientId: string,
  text: string,
  fetchedAt: Date,
): { ok: true; client: MetadataDocumentClient } | { ok: false; message: string } {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return failure('The client metadata document is not valid JSON.');
  }
  if (!isObject(document)) return failure('The client metadata document is not a JSON object.');
  if (document.client_id !== clientId)
    return failure(
      `The client metadata document's client_id (${JSON.stringify(document.client_id ?? null).slice(0, 200)}) is not exactly the URL it was fetched from.`,
    );
  if ('client_secret' in document || 'client_secret_expires_at' in document)
    return failure(
      'A client metadata document must not contain client_secret or client_secret_expires_at: no secret can be shared through it.',
    );
  const method = document.token_endpoint_auth_method ?? 'none';
  if (typeof method !== 'string') return failure('token_endpoint_auth_method must be a string.');
  if (method.startsWith('client_secret'))
    return failure(
      `token_endpoint_auth_method ${method} needs a shared secret, which a client metadata document cannot establish; use none.`,
    );
  if (method !== 'none')
    return failure(
      `token_endpoint_auth_method ${method} is not supported for client metadata documents; earshot accepts none (a public client with PKCE).`,
    );
  const name = document.client_name;
  if (typeof name !== 'string' || !name.trim())
    return failure('The client metadata document must have a client_name.');
  if (HIDDEN_CHARACTER.test(name))
    return failure(
      'client_name may not hold control, format (bidirectional overrides, invisible marks) or line separator characters.',
    );
  const uris = document.redirect_uris;
  if (
    !Array.isArray(uris) ||
    uris.length === 0 ||
    uris.length > MAX_REDIRECT_URIS ||
    !uris.every((uri) => validRedirectUri(uri) && !CONTROL_CHARACTER.test(uri as string))
  )
    return failure(
      `redirect_uris must list 1 to ${MAX_REDIRECT_URIS} absolute URIs: https, http on a loopback host, or a private-use scheme; no fragment, no control character.`,
    );
  if (
    document.grant_types !== undefined &&
    !(stringList(document.grant_types) && document.grant_types.includes('authorization_code'))
  )
    return failure('grant_types, when given, must include authorization_code.');
  if (
    document.response_types !== undefined &&
    !(stringList(document.response_types) && document.response_types.includes('code'))
  )
    return failure('response_types, when given, must include code.');
  return {
    ok: true,
    client: {
      id: clientId,
      name: name.trim().slice(0, 100),
      redirectUris: uris as string[],
      clientUri: httpsUrlOrNull(document.client_uri),
      logoUri: httpsUrlOrNull(document.logo_uri),
      fetchedAt,
    },
  };
}

type Fetched = { ok: true; text: string; headers: IncomingHttpHeaders } | { ok: false; message: string };

/**
 * GETs the document: the URL rule first, then one request to exactly the checked addresses, no
 * redirect followed, 200 and a JSON content type required, at most `maxBytes` read.
 */
async function fetchDocument(
  clientId: string,
  options: Required<Pick<ClientMetadataOptions, 'timeoutMs' | 'maxBytes'>> & ClientMetadataOptions,
): Promise<Fetched> {
  const { timeoutMs, maxBytes } = options;
  const started = performance.now();
  const check = await checkWebhookUrl(clientId, {
    ...(options.allow && { allow: options.allow }),
    ...(options.resolve && { resolve: options.resolve }),
    resolveTimeoutMs: Math.min(timeoutMs, 5_000),
    subject: 'The client_id URL',
    publicRule: 'earshot fetches client metadata documents from public addresses only',
  });
  if (!check.ok) {
    // Anyone can name any host here, and the answer is shown to them: what a name resolves to,
    // or whether it resolves at all, would map the server's internal DNS (metadata.internal,
    // db.corp). A host name that cannot be used gets one answer; an address literal its reason.
    const hostname = new URL(clientId).hostname;
    if (
      (check.reason === 'unresolvable' || check.reason === 'non_public_address') &&
      !hostname.startsWith('[') &&
      isIP(hostname) === 0
    )
      return failure(
        `The client_id URL host ${hostname} could not be resolved to public addresses; earshot fetches client metadata documents from public addresses only.`,
      );
    return failure(check.message);
  }
  const remaining = Math.max(1, timeoutMs - Math.round(performance.now() - started));
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), remaining);
  const lease = oneOffPool({
    origin: check.url.origin,
    hostname: check.hostname,
    addresses: check.addresses,
    ...(options.ca !== undefined && { ca: options.ca }),
    connectTimeoutMs: timeoutMs,
  });
  const where = 'The client metadata document';
  try {
    // A Pool never follows redirects: a 3xx comes back as the answer.
    const response = await lease.pool.request({
      path: `${check.url.pathname}${check.url.search}`,
      method: 'GET',
      signal: controller.signal,
      headersTimeout: remaining,
      bodyTimeout: remaining,
      headers: { accept: 'application/json', 'user-agent': 'earshot-oauth/1' },
    });
    const { statusCode: status, headers } = response;
    const refuse = (message: string) => {
      // Not read further: the connection is dropped (its abort error is expected, not reported).
      response.body.on('error', () => undefined).destroy();
      return failure(message);
    };
    if (status >= 300 && status < 400)
      return refuse(`${where} URL answered HTTP ${status}, a redirect, which earshot does not follow.`);
    if (status !== 200)
      return refuse(`${where} URL answered HTTP ${status}; it must answer 200 with the document.`);
    if (!isJsonType(headers['content-type']))
      return refuse(
        // The header is the server's text on earshot's own error page: cut short, not a message.
        `${where} was served as ${JSON.stringify(String(headers['content-type'] ?? 'no content type').slice(0, 80))}; it must be application/json.`,
      );
    const encoding = String(headers['content-encoding'] ?? 'identity').toLowerCase();
    if (encoding !== 'identity')
      return refuse(`${where} must not be sent with content-encoding ${encoding}.`);
    if (Number(headers['content-length']) > maxBytes)
      return refuse(`${where} is larger than ${maxBytes} bytes.`);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) return refuse(`${where} is larger than ${maxBytes} bytes.`);
      chunks.push(chunk as Buffer);
    }
    try {
      return {
        ok: true,
        text: new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks)),
        headers,
      };
    } catch {
      return failure(`${where} is not valid UTF-8.`);
    }
  } catch (error) {
    return failure(
      controller.signal.aborted
        ? `${where} could not be fetched within ${timeoutMs} ms.`
        : `${where} could not be fetched (${describeError(error)}).`,
    );
  } finally {
    clearTimeout(timer);
    await lease.release();
  }
}

/** The per-process resolver: a bounded cache of valid documents, one fetch at a time per URL. */
export function createClientMetadataResolver(options: ClientMetadataOptions): ClientMetadataResolver {
  // A name lookup outlives the fetch that stopped waiting for it: dns.lookup cannot be cancelled
  // and holds one of libuv's few threadpool threads until the resolver gives up. It keeps its
  // slot until it ends, or anyone could pile up lookups of stalling names 16 every 5 seconds.
  const lookup = options.resolve ?? systemResolve;
  let lookups = 0;
  const resolve: Resolve = async (hostname) => {
    lookups += 1;
    try {
      return await lookup(hostname);
    } finally {
      lookups -= 1;
    }
  };
  const settings = {
    ...options,
    resolve,
    timeoutMs: options.timeoutMs ?? METADATA_TIMEOUT_MS,
    maxBytes: options.maxBytes ?? METADATA_MAX_BYTES,
  };
  // Map iteration order is insertion order: the oldest entry goes first beyond the bound.
  const cache = new Map<string, { client: MetadataDocumentClient; expiresAt: number }>();
  const inFlight = new Map<string, Promise<MetadataResult>>();
  const maxConcurrent = options.maxConcurrentFetches ?? METADATA_CONCURRENT_FETCHES;

  async function fetchAndCheck(clientId: string): Promise<MetadataResult> {
    const fetched = await fetchDocument(clientId, settings);
    if (!fetched.ok) return fetched;
    const now = options.now();
    const parsed = parseMetadataDocument(clientId, fetched.text, now);
    if (!parsed.ok) return parsed;
    cache.delete(clientId);
    cache.set(clientId, {
      client: parsed.client,
      expiresAt: now.getTime() + cacheLifetimeSeconds(fetched.headers, now) * 1000,
    });
    for (const oldest of cache.keys()) {
      if (cache.size <= CACHE_ENTRIES) break;
      cache.delete(oldest);
    }
    return { ok: true, client: parsed.client, fetched: true };
  }

  return {
    async resolve(clientId) {
      const problem = clientIdUrlProblem(clientId);
      if (problem) return failure(problem);
      const cached = cache.get(clientId);
      if (cached && cached.expiresAt > options.now().getTime())
        return { ok: true, client: cached.client, fetched: false };
      let pending = inFlight.get(clientId);
      if (!pending) {
        if (inFlight.size >= maxConcurrent || lookups >= maxConcurrent)
          return {
            ok: false,
            message: 'earshot is fetching too many client metadata documents at once; try again in a moment.',
            busy: true,
          };
        pending = fetchAndCheck(clientId).finally(() => inFlight.delete(clientId));
        inFlight.set(clientId, pending);
      }
      return pending;
    },
  };
}
