import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { entitiesProjection } from '../../projections/entities/projection.ts';
import { ByteLru } from '../byte-lru.ts';
import type { Queryable } from '../db/db.ts';
import { ACTIVE_WINDOW_DAYS, BRIEFLY_TRACKED_DAYS } from './format-rules.ts';
import { SharedReads } from './shared-reads.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The 200 answer may be served again from the catalog's response cache (docs/catalog.md);
     * `readModels` names the read models it also comes from beyond the catalog's own.
     */
    catalogCache?: boolean | { readModels: readonly { name: string }[] };
  }
}

interface Entry {
  versions: string;
  computedAt: number;
  /** When a time-derived value may next change; Infinity when none can. */
  validUntil: number;
  contentType: string;
  /** Encoded once, so a hit sends bytes as they are. */
  body: Buffer;
}

/** An entry's objects and headers beyond its body, URL and versions, in bytes (rounded up): what an
 * empty page under a long URL still holds. */
const ENTRY_OVERHEAD = 256;

interface Pending {
  key: string;
  versions: string;
  now: number;
}

const pendingOf = new WeakMap<FastifyRequest, Pending>();

/**
 * SQL: where the read models named by the text[] parameter `names` stand: each one's checkpoint with
 * the time it was last written (a rebuild ends at the same position, with rows the new code wrote)
 * and parked events (a replayed parked event changes rows without moving the checkpoint).
 */
export const readModelVersionsSql = (names: string) =>
  `coalesce((select string_agg(name || '@' || position || '@' || updated_at, ',' order by name)
               from projection_checkpoints where name = any(${names})), '')
   || '#' || (select count(*) from parked_events where subscription = any(${names}))`;

/** Where the read models behind the catalog's answers stand (readModelVersionsSql). */
async function readModelVersions(db: Queryable, names: readonly string[]): Promise<string> {
  const { rows } = await db.query<{ v: string }>(`select ${readModelVersionsSql('$1::text[]')} as v`, [
    names,
  ]);
  return rows[0]?.v ?? '';
}

/**
 * The first instant after `now` at which a time-derived catalog value can change: an episode
 * leaving or entering the trailing window (episodes per week, publishing status) or a show ceasing
 * to be briefly tracked (docs/catalog.md, "Format profile").
 */
async function nextTimeBoundary(db: Queryable, now: Date): Promise<number> {
  const { rows } = await db.query<{ at: Date | null }>(
    `select least(
       (select min(published_at) from podcast_format_episodes
         where published_at > $1::timestamptz - interval '${ACTIVE_WINDOW_DAYS} days')
         + interval '${ACTIVE_WINDOW_DAYS} days',
       (select min(published_at) from podcast_format_episodes where published_at > $1::timestamptz),
       (select min(first_episode_published_at) from podcast_formats
         where first_episode_published_at > $1::timestamptz - interval '${BRIEFLY_TRACKED_DAYS} days')
         + interval '${BRIEFLY_TRACKED_DAYS} days') as at`,
    [now],
  );
  return rows[0]?.at ? rows[0].at.getTime() : Number.POSITIVE_INFINITY;
}

export interface ResponseCacheOptions {
  /** Bytes of answers kept (least recently used go first); 0 keeps none. */
  maxBytes: number;
  now(): Date;
  /** The projections whose read models the cached routes read. */
  projections: readonly { name: string }[];
}

/**
 * Answers of the catalog's read routes kept per process (docs/catalog.md, "Response cache"). A
 * kept answer is served only while every read model it came from is at the same position and no
 * time-derived value can have changed since, so it is the answer the route would compute now.
 * Routes opt in with `config: { catalogCache: true }`; only 200 answers are kept.
 */
export function responseCache(options: ResponseCacheOptions) {
  const names = [...new Set([...options.projections.map((p) => p.name), entitiesProjection.name])];
  const entries = new ByteLru<Entry>(options.maxBytes);

  return function register(app: FastifyInstance) {
    if (options.maxBytes <= 0) return;
    // Read once for the requests that arrive while a read is under way (SharedReads).
    const checks = new SharedReads<string>();
    app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
      const opted = request.routeOptions.config.catalogCache;
      if (!opted) return;
      const key = request.url;
      const models = opted === true ? names : [...names, ...opted.readModels.map((m) => m.name)];
      const versions = await checks.after(models.join(','), () => readModelVersions(app.db, models));
      const now = options.now().getTime();
      const entry = entries.get(key);
      if (entry && entry.versions === versions && entry.computedAt <= now && now < entry.validUntil)
        return reply.type(entry.contentType).send(entry.body);
      pendingOf.set(request, { key, versions, now });
    });
    app.addHook('onSend', async (request, reply, payload) => {
      const pending = pendingOf.get(request);
      if (!pending || reply.statusCode !== 200) return payload;
      if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
      pendingOf.delete(request);
      const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
      const size = body.length + pending.key.length + pending.versions.length + ENTRY_OVERHEAD;
      if (!entries.fits(size)) return payload;
      // An answer is never worse off for not being kept: a failed lookup keeps nothing.
      const validUntil = await nextTimeBoundary(app.db, new Date(pending.now)).catch(() => undefined);
      if (validUntil === undefined) return payload;
      entries.set(
        pending.key,
        {
          versions: pending.versions,
          computedAt: pending.now,
          validUntil,
          contentType: String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8'),
          body,
        },
        size,
      );
      return payload;
    });
  };
}
