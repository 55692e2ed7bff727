import type { FastifyReply } from 'fastify';
import {
  ITEM_TOPICS,
  listPodcastItems,
  listPodcastStamps,
  type MatchQuality,
  type PodcastFilters,
  type PodcastItemRow,
  type PodcastItemStamp,
  podcastItemRows,
  podcastItemStamps,
  titleQuery,
} from '../../projections/podcasts/queries.ts';
import { ByteLru } from '../byte-lru.ts';
import type { Db, Queryable } from '../db/db.ts';
import { pageOf } from '../http/pagination.ts';
import { publishingStatus } from './format-rules.ts';
import type { PodcastListIndex } from './podcast-list-index.ts';
import { compactFormatSchema, podcastSchema } from './schemas.ts';
import { toPodcast, weeklyRate } from './views.ts';

type Properties = Record<string, object>;
export const objectOf = (properties: Properties) => ({ type: 'object', properties });

/**
 * An object schema cut at its keys computed per request: the schemas of the runs of other keys
 * between them (one more than the keys), and one schema per key, in the schema's order.
 */
function cut(properties: Properties, perRequest: readonly string[]) {
  const runs: Properties[] = [{}];
  for (const [key, schema] of Object.entries(properties)) {
    if (perRequest.includes(key)) runs.push({});
    else (runs.at(-1) as Properties)[key] = schema;
  }
  if (runs.length !== perRequest.length + 1)
    throw new Error(`cut: ${perRequest.join(', ')} not all in the schema`);
  return {
    runs: runs.map(objectOf),
    keys: Object.fromEntries(perRequest.map((key) => [key, objectOf({ [key]: properties[key] as object })])),
  };
}

// What of a Podcast depends on the request: its match quality (q) and in its format the fields
// that depend on the time of reading (docs/catalog.md, "Items rendered once").
const PODCAST = cut(podcastSchema.properties, ['match_quality', 'format']);
const FORMAT = cut(compactFormatSchema.properties, ['episodes_per_week', 'publishing_status']);
const PAGE = pageOf(podcastSchema);
const EMPTY_PAGE = '{"data":[]';

type Serialize = (value: Record<string, unknown>) => string;

/**
 * The route's own serializers (fastify compiles each schema once per route), so every byte of an
 * item is written as the route's response schema writes it.
 */
function serializers(reply: FastifyReply) {
  const compile = (schema: object) =>
    reply.compileSerializationSchema(schema as Record<string, unknown>) as Serialize;
  return {
    podcast: PODCAST.runs.map(compile),
    matchQuality: compile(PODCAST.keys.match_quality as object),
    format: FORMAT.runs.map(compile),
    episodesPerWeek: compile(FORMAT.keys.episodes_per_week as object),
    publishingStatus: compile(FORMAT.keys.publishing_status as object),
    page: compile(PAGE),
  };
}
type Serializers = ReturnType<typeof serializers>;

/** An object's members as serialized, without its braces. */
const members = (json: string) => json.slice(1, -1);

/** An object of these members (empty ones left out). */
function objectJson(parts: readonly string[]) {
  let json = '';
  for (const part of parts) if (part) json += json ? `,${part}` : part;
  return `{${json}}`;
}

/** A show's item rendered for one version: the members of each run of PODCAST and FORMAT. */
interface Rendered {
  version: string;
  /** performance.now() when rendered. */
  at: number;
  podcast: string[];
  format?: { first: Date; latest: Date; members: string[] };
}

/**
 * A version is the 32-bit transaction id that wrote the show's list row, which comes round again
 * after 2^32 transactions: an item rendered this long ago is rendered again before it is used.
 */
const RENDERED_FOR_MS = 10 * 60_000;
/** A rendered item's objects beyond its text, in bytes (rounded up). */
const RENDERED_OVERHEAD = 160;

/**
 * Podcast items as JSON text (docs/catalog.md, "Items rendered once"): each show's item is rendered
 * once per version of its list row and kept per process (up to `maxBytes`, least recently used
 * first out); a request reads the page's versions and the trailing window's episode counts, and
 * joins the kept text to the fields computed for it. What is not kept is read by id and rendered.
 */
export class PodcastItems {
  readonly #rendered: ByteLru<Rendered>;
  readonly #index: PodcastListIndex | undefined;

  /** `index`: where a page without `q` finds its stamps first (docs/catalog.md, "The list index"). */
  constructor(maxBytes: number, index?: PodcastListIndex) {
    this.#rendered = new ByteLru(maxBytes);
    this.#index = index;
  }

  /** Starts loading the list index, if any: its pages are joined from the kept items, so only with them. */
  warm(db: Db): void {
    if (this.#rendered.maxBytes > 0) this.#index?.warm(db);
  }

  /** A page of GET /v1/podcasts (and /search) as the route's JSON; `next` gives the cursor of the next page. */
  async page(
    db: Db,
    reply: FastifyReply,
    filters: PodcastFilters,
    limit: number,
    offset: number,
    next: () => string,
  ): Promise<string> {
    const s = serializers(reply);
    let items: string[] | undefined;
    let more = false;
    if (this.#rendered.maxBytes > 0) {
      const stamps =
        (filters.q ? undefined : await this.#index?.stamps(db, filters, limit + 1, offset)) ??
        (await listPodcastStamps(db, await this.#searched(db, filters), limit + 1, offset));
      more = stamps.length > limit;
      items = await this.#joined(db, s, stamps.slice(0, limit), filters.now);
    }
    if (!items) {
      // Nothing is kept, or a show changed between the two statements: the whole page from one
      // statement, its rows, order and counts as one snapshot saw them.
      const rows = await listPodcastItems(db, filters, limit + 1, offset);
      more = rows.length > limit;
      items = rows.slice(0, limit).map((row) => this.#item(s, row, ITEM_TOPICS, filters.now));
    }
    const envelope = s.page(
      more ? { data: [], has_more: true, cursor: next() } : { data: [], has_more: false },
    );
    if (!envelope.startsWith(EMPTY_PAGE)) throw new Error('a page does not begin with its data');
    return `{"data":[${items.join(',')}]${envelope.slice(EMPTY_PAGE.length)}`;
  }

  /** With q, the filters with its title matches when the list index can give them. */
  async #searched(db: Db, filters: PodcastFilters): Promise<PodcastFilters> {
    if (!filters.q || !this.#index) return filters;
    const titleHits = await this.#index.titleHits(db, titleQuery(filters.q));
    return titleHits ? { ...filters, titleHits } : filters;
  }

  /** One show's item as the route's JSON (GET /v1/podcasts/{id}); undefined when the show has none. */
  async one(
    db: Queryable,
    reply: FastifyReply,
    id: string,
    now: Date,
    topicLimit: number,
  ): Promise<string | undefined> {
    const s = serializers(reply);
    if (this.#rendered.maxBytes > 0) {
      const [stamp] = await podcastItemStamps(db, [id], now);
      if (!stamp) return undefined;
      const kept = this.#kept(id, topicLimit, stamp.version);
      if (kept) return join(s, kept, stamp.episodes_in_window, undefined, now);
    }
    const [row] = await podcastItemRows(db, [id], now, topicLimit);
    return row && this.#item(s, row, topicLimit, now);
  }

  /**
   * The items of a page's stamps: those not kept for their version are read by id and rendered
   * (the page's statement, a search's above all, is not run again); undefined when one was read at
   * another version than its stamp's (written since).
   */
  async #joined(db: Queryable, s: Serializers, stamps: PodcastItemStamp[], now: Date) {
    const kept = stamps.map((stamp) => this.#kept(stamp.id, ITEM_TOPICS, stamp.version));
    const missing = stamps.filter((_, i) => !kept[i]);
    if (missing.length) {
      const rows = await podcastItemRows(
        db,
        missing.map((stamp) => stamp.id),
        now,
        ITEM_TOPICS,
      );
      const read = new Map(rows.map((row) => [row.podcast.id, row]));
      for (const [i, stamp] of stamps.entries()) {
        if (kept[i]) continue;
        const row = read.get(stamp.id);
        if (row?.version !== stamp.version) return undefined;
        kept[i] = this.#render(s, row, ITEM_TOPICS);
      }
    }
    return stamps.map((stamp, i) =>
      join(s, kept[i] as Rendered, stamp.episodes_in_window, stamp.matchQuality, now),
    );
  }

  #kept(id: string, topicLimit: number, version: string): Rendered | undefined {
    const kept = this.#rendered.get(keyOf(id, topicLimit));
    return kept?.version === version && performance.now() - kept.at < RENDERED_FOR_MS ? kept : undefined;
  }

  /** The item of a row read whole, rendered again unless kept for its version. */
  #item(s: Serializers, row: PodcastItemRow, topicLimit: number, now: Date) {
    const rendered = this.#kept(row.podcast.id, topicLimit, row.version) ?? this.#render(s, row, topicLimit);
    return join(s, rendered, row.format?.episodes_in_window ?? null, row.matchQuality, now);
  }

  #render(s: Serializers, row: PodcastItemRow, topicLimit: number): Rendered {
    // Fields that depend on the time of reading are computed for any instant and not serialized.
    const item = toPodcast(row.podcast, {
      ...(row.format ? { format: row.format } : {}),
      topics: row.topics,
      now: new Date(0),
    });
    const rendered: Rendered = {
      version: row.version,
      at: performance.now(),
      podcast: s.podcast.map((serialize) => members(serialize(item))),
    };
    if (row.format && item.format)
      rendered.format = {
        first: row.format.first_episode_published_at,
        latest: row.format.latest_episode_published_at,
        members: s.format.map((serialize) => members(serialize(item.format as Record<string, unknown>))),
      };
    const key = keyOf(row.podcast.id, topicLimit);
    const text = [...rendered.podcast, ...(rendered.format?.members ?? [])].join('').length;
    // two bytes a character at most, as V8 holds a string with any character beyond Latin-1
    this.#rendered.set(key, rendered, 2 * (text + key.length + row.version.length) + RENDERED_OVERHEAD);
    return rendered;
  }
}

/**
 * An object's JSON with the members of `more` after its own, serialized by `schema` (an object
 * schema; the same object every request: fastify compiles it once per route).
 */
export function withMembers(reply: FastifyReply, json: string, schema: object, more: object) {
  const added = members(
    (reply.compileSerializationSchema(schema as Record<string, unknown>) as Serialize)(
      more as Record<string, unknown>,
    ),
  );
  return added ? `${json.slice(0, -1)},${added}}` : json;
}

const keyOf = (id: string, topicLimit: number) => `${topicLimit} ${id}`;

/** An item's JSON: its kept members joined to those computed for this request, in the schema's order. */
function join(
  s: Serializers,
  rendered: Rendered,
  episodesInWindow: number | null,
  matchQuality: MatchQuality | undefined,
  now: Date,
) {
  const [head = '', tail = '', rest = ''] = rendered.podcast;
  let format = '';
  if (rendered.format) {
    const [first = '', middle = '', last = ''] = rendered.format.members;
    const perWeek = weeklyRate(
      { first_episode_published_at: rendered.format.first, episodes_in_window: episodesInWindow ?? 0 },
      now,
    );
    format = `"format":${objectJson([
      first,
      perWeek === null ? '' : members(s.episodesPerWeek({ episodes_per_week: perWeek })),
      middle,
      members(s.publishingStatus({ publishing_status: publishingStatus(rendered.format.latest, now) })),
      last,
    ])}`;
  }
  return objectJson([
    head,
    matchQuality ? members(s.matchQuality({ match_quality: matchQuality })) : '',
    tail,
    format,
    rest,
  ]);
}
