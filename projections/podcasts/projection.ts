import { lockPodcastList } from '../../src/catalog/podcast-list-locks.ts';
import { searchKey } from '../../src/catalog/search-key.ts';
import type { Queryable } from '../../src/db/db.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import type { EpisodeTranscribed, PodcastUpserted } from '../../src/ingestion/events.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';

/** The merged columns; each takes its value from the latest event (occurred_at) that carries it. */
const FIELDS = [
  'title',
  'slug',
  'description',
  'url',
  'image_url',
  'language',
  'explicit',
  'popularity',
  'bias',
  'political_context',
  'suitability_tier',
  'has_video',
  'feed_url',
  'apple_id',
  'directory_ids',
  'publisher',
  'topics',
] as const;
type Field = (typeof FIELDS)[number];
/** Columns derived from a field, written with it. */
const DERIVED: Partial<Record<Field, string>> = { title: 'search_title', description: 'search_description' };
const TYPES: Partial<Record<Field, string>> = {
  explicit: 'boolean',
  popularity: 'double precision',
  has_video: 'boolean',
  directory_ids: 'jsonb',
  publisher: 'jsonb',
  topics: 'jsonb',
};

type Values = Partial<Record<Field | 'search_title' | 'search_description', unknown>>;
interface Version {
  id: string;
  values: Values;
  times: Partial<Record<Field, string>>;
}

const APPLE_ID = /\/id(\d+)(?:[/?#]|$)/;

function valuesOf(event: PodcastUpserted | EpisodeTranscribed): Values {
  const p = event.podcast;
  const values: Values =
    event.type === 'podcast.upserted'
      ? { ...event.podcast, apple_id: event.podcast.directory_ids?.apple }
      : {
          title: p.title,
          slug: p.slug,
          language: p.language,
          image_url: p.image_url,
          url: p.url,
          popularity: p.popularity,
          bias: p.bias,
          explicit: p.explicit,
          publisher: p.publisher,
          apple_id: event.podcast.apple_podcasts_url
            ? APPLE_ID.exec(event.podcast.apple_podcasts_url)?.[1]
            : undefined,
        };
  const out: Values = {};
  for (const field of FIELDS) if (values[field] !== undefined) out[field] = values[field];
  if (typeof out.title === 'string') out.search_title = titleKey(out.title);
  if (typeof out.description === 'string') out.search_description = descriptionKey(out.description);
  return out;
}

/**
 * A title's search key, at most TITLE_KEY_CHARS characters (2,000 bytes): it is in a btree index,
 * whose rows hold 2,704 bytes, and folding can make a title far longer than it is ('ﷺ' is four
 * words). A query is at most 200 characters, so a longer key is never matched on what is cut.
 */
const TITLE_KEY_CHARS = 500;
const titleKey = (title: string) => Array.from(searchKey(title)).slice(0, TITLE_KEY_CHARS).join('').trimEnd();

/**
 * A description's search key, at most DESCRIPTION_KEY_CHARS characters: its full-text index holds
 * to_tsvector of it, which PostgreSQL refuses past 1 MB, and folding can make a description of
 * 100,000 characters far longer ('㌖' is six letters, 'ﷺ' four words): such a key of 1.5 MB made
 * the event fail and be parked, and one of 1.9 MB cost 0.65 s to index and to every query that read
 * it. 100,000 characters make at most about 0.55 MB of tsvector, and an unfolded description is never cut.
 */
export const DESCRIPTION_KEY_CHARS = 100_000;
const descriptionKey = (description: string) => {
  const key = searchKey(description);
  return key.length <= DESCRIPTION_KEY_CHARS
    ? key
    : Array.from(key).slice(0, DESCRIPTION_KEY_CHARS).join('').trimEnd();
};

/** Merges a batch's events per podcast, field by field, the later occurred_at winning. */
function mergeBatch(events: readonly RecordedEvent[]): Version[] {
  const byId = new Map<string, Version>();
  for (const { data } of events) {
    const event = data as PodcastUpserted | EpisodeTranscribed;
    const at = new Date(event.occurred_at).toISOString();
    const version = byId.get(event.podcast.id) ?? { id: event.podcast.id, values: {}, times: {} };
    const values = valuesOf(event);
    for (const field of FIELDS) {
      if (!(field in values)) continue;
      const seen = version.times[field];
      if (seen !== undefined && seen > at) continue;
      version.values[field] = values[field];
      version.times[field] = at;
      const derived = DERIVED[field];
      if (derived) version.values[derived as 'search_title'] = values[derived as 'search_title'];
    }
    byId.set(event.podcast.id, version);
  }
  return [...byId.values()];
}

const columns = FIELDS.flatMap((field) => [field, ...(DERIVED[field] ? [DERIVED[field]] : [])]);
const wins = (field: Field) =>
  `coalesce(excluded.field_times->>'${field}', '') >= coalesce(podcasts.field_times->>'${field}', '')
   and excluded.field_times ? '${field}'`;
const UPSERT = `
  insert into podcasts (id, ${columns.join(', ')}, field_times)
  select r.id, ${columns.map((c) => `r.${c}`).join(', ')}, r.field_times
    from jsonb_to_recordset($1::jsonb) as r(id text, ${columns
      .map((c) => `${c} ${TYPES[c as Field] ?? 'text'}`)
      .join(', ')}, field_times jsonb)
  on conflict (id) do update set
    ${FIELDS.flatMap((field) =>
      [field, ...(DERIVED[field] ? [DERIVED[field]] : [])].map(
        (column) =>
          `${column} = case when ${wins(field)} then excluded.${column} else podcasts.${column} end`,
      ),
    ).join(',\n    ')},
    field_times = (select jsonb_object_agg(k, greatest(podcasts.field_times->>k, excluded.field_times->>k))
                     from jsonb_object_keys(podcasts.field_times || excluded.field_times) as k),
    updated_at = now()`;

/**
 * The podcasts read model: one row per show, from podcast.upserted and from the podcast block of
 * every episode. A field takes the value of the latest event (occurred_at) that carries it.
 */
export const podcastsProjection: Projection = {
  name: 'podcasts',
  eventTypes: ['PodcastUpserted', 'EpisodeTranscribed'],
  async apply(tx: Queryable, events: readonly RecordedEvent[]) {
    const versions = mergeBatch(events);
    if (versions.length === 0) return;
    const rows = versions.map((v) => ({ id: v.id, ...v.values, field_times: v.times }));
    // Its inserted and its updated shows are refreshed by a trigger each.
    await lockPodcastList(
      tx,
      versions.map((v) => v.id),
    );
    // A podcast first seen without a title cannot happen: title is required in both events.
    await tx.query(UPSERT, [JSON.stringify(rows)]);
  },
  async reset(tx: Queryable) {
    await tx.query('delete from podcasts');
  },
};
