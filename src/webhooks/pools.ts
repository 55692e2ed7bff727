import { createHash } from 'node:crypto';
import { Pool } from 'undici';
import type { CheckedAddress } from './address-rule.ts';
import { pinnedLookup } from './pinned-lookup.ts';

/** What a pooled connection was opened for: reused only when all of it is the same again. */
export interface PoolKey {
  /** The checked URL's origin (scheme, host, port). */
  origin: string;
  hostname: string;
  /** The addresses the URL rule returned for this send. */
  addresses: readonly CheckedAddress[];
  ca?: string | Buffer | Array<string | Buffer>;
  connectTimeoutMs: number;
}

export interface WebhookPoolOptions {
  /** Most pools kept at once; the least recently used one is closed beyond. Default 256. */
  maxPools?: number;
  /** A pool unused this long is closed. Default 30 000 ms. */
  idleMs?: number;
  /**
   * Connections per pool (one origin at one address set). Default 64, the deliverer's default
   * concurrency: a send waiting in a pool for a connection would spend its timeout unsent.
   */
  connectionsPerPool?: number;
}

export interface WebhookPools {
  /**
   * A keep-alive pool pinned to exactly `key.addresses` for `key.hostname`, shared by later sends
   * whose own fresh check returns the same origin, address set and CA. `release` marks the use
   * finished (idle pools are closed after `idleMs`).
   */
  acquire(key: PoolKey): PoolLease;
  /** Pools open now. */
  readonly size: number;
  /** Closes every pool (in-flight requests finish first); later sends get one-off connections. */
  close(): Promise<void>;
}

export interface PoolLease {
  pool: Pool;
  /** The send is over with this pool. */
  release(): Promise<void>;
}

interface Entry {
  pool: Pool;
  users: number;
  lastUsed: number;
}

const caDigests = new WeakMap<object, string>();

function caDigest(ca: PoolKey['ca']): string {
  if (ca === undefined) return 'system';
  if (typeof ca === 'object') {
    const known = caDigests.get(ca);
    if (known) return known;
  }
  const hash = createHash('sha256');
  for (const part of Array.isArray(ca) ? ca : [ca]) hash.update(part).update('\0');
  const digest = hash.digest('base64url');
  if (typeof ca === 'object') caDigests.set(ca, digest);
  return digest;
}

/** The cache key: origin, the sorted checked addresses, the CA and the connect timeout. */
export function poolKeyString(key: PoolKey): string {
  const addresses = key.addresses
    .map((a) => `${a.family}/${a.address}`)
    .sort()
    .join(',');
  return `${key.origin}|${key.hostname.toLowerCase()}|${addresses}|${caDigest(key.ca)}|${key.connectTimeoutMs}`;
}

function openPool(key: PoolKey, connections: number): Pool {
  return new Pool(key.origin, {
    connections,
    // Keep-alive per undici's defaults (4 s, or the server's Keep-Alive hint less 2 s), so an idle
    // connection is dropped before the receiver would close it under a request.
    connect: {
      lookup: pinnedLookup(key.hostname, key.addresses),
      timeout: key.connectTimeoutMs,
      ...(key.ca !== undefined && { ca: key.ca }),
    },
  });
}

/** A connection of its own for one send, closed when released (no pools configured, or closed). */
export function oneOffPool(key: PoolKey): PoolLease {
  const pool = openPool(key, 1);
  return { pool, release: () => pool.destroy().catch(() => undefined) };
}

/**
 * Keep-alive connection pools for webhook sends, one per (origin, checked address set, CA). A pool
 * only ever connects to the addresses it was made for, and a send uses it only when its own URL
 * check, made just before, returned that same set: a name that now resolves elsewhere gets a new
 * pool and never an old connection. Bounded: least recently used beyond `maxPools`, and idle pools
 * after `idleMs`, are closed.
 */
export function createWebhookPools(options: WebhookPoolOptions = {}): WebhookPools {
  const maxPools = options.maxPools ?? 256;
  const idleMs = options.idleMs ?? 30_000;
  const connections = options.connectionsPerPool ?? 64;
  // Map iteration order is insertion order: re-inserting on use keeps the least recent first.
  const entries = new Map<string, Entry>();
  const closing = new Set<Promise<void>>();
  let closed = false;

  const retire = (id: string, entry: Entry) => {
    entries.delete(id);
    const done = entry.pool
      .close()
      .catch(() => undefined)
      .finally(() => closing.delete(done));
    closing.add(done);
  };

  const sweeper = setInterval(
    () => {
      const cutoff = Date.now() - idleMs;
      for (const [id, entry] of entries) {
        if (entry.users === 0 && entry.lastUsed <= cutoff) retire(id, entry);
      }
    },
    Math.max(50, Math.floor(idleMs / 2)),
  );
  sweeper.unref();

  return {
    get size() {
      return entries.size;
    },
    acquire(key) {
      if (closed) return oneOffPool(key);
      const id = poolKeyString(key);
      let entry = entries.get(id);
      if (entry) {
        entries.delete(id);
      } else {
        entry = { pool: openPool(key, connections), users: 0, lastUsed: Date.now() };
      }
      entries.set(id, entry);
      entry.users += 1;
      // Beyond the bound, close the least recently used pools that no send is using.
      for (const [oldest, candidate] of entries) {
        if (entries.size <= maxPools) break;
        if (candidate.users === 0) retire(oldest, candidate);
      }
      const used = entry;
      let released = false;
      return {
        pool: used.pool,
        async release() {
          if (released) return;
          released = true;
          used.users -= 1;
          used.lastUsed = Date.now();
        },
      };
    },
    async close() {
      closed = true;
      clearInterval(sweeper);
      for (const [id, entry] of entries) retire(id, entry);
      await Promise.all(closing);
    },
  };
}
