import type { Queryable } from '../../src/db/db.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import type { EntityUpserted } from '../../src/ingestion/events.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';

export const fold = (text: string) =>
  text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .trim();

/**
 * Characters of an entity's names kept for fuzzy and substring search: enough for a name and many
 * aliases, few enough that scoring any entity stays cheap (docs/knowledge-graph.md, "Entity search").
 * Exact and prefix matches read every name (entity_names).
 */
const SEARCH_TEXT_CHARS = 2000;

/** The folded names joined, cut at SEARCH_TEXT_CHARS code points (as PostgreSQL's `left` counts). */
export function searchText(names: readonly string[]): string {
  const joined = names.join(' ');
  return joined.length <= SEARCH_TEXT_CHARS
    ? joined
    : Array.from(joined).slice(0, SEARCH_TEXT_CHARS).join('');
}

/**
 * The entities read model: the newest entity.upserted (by occurred_at) of each entity wins. A slug
 * resolves to the entity that claimed it first (slug_claim, drawn in store order when an entity takes
 * a slug and kept while it keeps it), so a later entity cannot take over another's slug.
 */
export const entitiesProjection: Projection = {
  name: 'entities',
  eventTypes: ['EntityUpserted'],
  async apply(tx: Queryable, events: readonly RecordedEvent[]) {
    // Several versions of one entity in a batch: keep the newest, as the upsert below would.
    const latest = new Map<string, EntityUpserted>();
    for (const event of events) {
      const data = event.data as EntityUpserted;
      const seen = latest.get(data.entity.id);
      if (!seen || Date.parse(seen.occurred_at) <= Date.parse(data.occurred_at))
        latest.set(data.entity.id, data);
    }
    const rows = [...latest.values()];
    if (rows.length === 0) return;
    const names = rows.map((row) => [row.entity.name, ...(row.entity.aliases ?? [])].map(fold));
    await tx.query(
      `insert into entities (id, slug, name, entity_type, aliases, description, image_url, wikipedia_url,
                             company, person, external_links, occurred_at, search_names, search_text)
       select r.id, r.slug, r.name, r.entity_type, array(select jsonb_array_elements_text(r.aliases)),
              r.description, r.image_url, r.wikipedia_url, r.company, r.person, r.external_links, r.occurred_at,
              array(select jsonb_array_elements_text(r.search_names)), r.search_text
         from jsonb_to_recordset($1::jsonb) as r(
              id text, slug text, name text, entity_type text, aliases jsonb, description text,
              image_url text, wikipedia_url text, company jsonb, person jsonb, external_links jsonb, occurred_at timestamptz,
              search_names jsonb, search_text text)
       on conflict (id) do update set
              slug = excluded.slug, name = excluded.name, entity_type = excluded.entity_type,
              aliases = excluded.aliases, description = excluded.description, image_url = excluded.image_url,
              wikipedia_url = excluded.wikipedia_url, company = excluded.company, person = excluded.person,
              external_links = excluded.external_links,
              occurred_at = excluded.occurred_at, search_names = excluded.search_names,
              search_text = excluded.search_text, updated_at = now(),
              slug_claim = case when entities.slug = excluded.slug then entities.slug_claim else excluded.slug_claim end
        where entities.occurred_at <= excluded.occurred_at`,
      [
        JSON.stringify(
          rows.map((row, i) => ({
            id: row.entity.id,
            slug: row.entity.slug,
            name: row.entity.name,
            entity_type: row.entity.entity_type,
            aliases: row.entity.aliases ?? [],
            description: row.entity.description ?? null,
            image_url: row.entity.image_url ?? null,
            wikipedia_url: row.entity.wikipedia_url ?? null,
            company: row.entity.company ?? null,
            person: row.entity.person ?? null,
            external_links: row.entity.external_links ?? [],
            occurred_at: row.occurred_at,
            search_names: names[i],
            search_text: searchText(names[i]!),
          })),
        ),
      ],
    );
    // entity_names mirrors search_names of the rows as they now stand (an older upsert changed nothing).
    await tx.query(
      `with current_names as (
         select distinct e.id, n.name from entities e, unnest(e.search_names) as n(name) where e.id = any($1::text[])
       ), stale as (
         delete from entity_names x
          where x.entity_id = any($1::text[])
            and not exists (select 1 from current_names c where c.id = x.entity_id and c.name = x.name)
       )
       insert into entity_names (entity_id, name) select id, name from current_names on conflict do nothing`,
      [rows.map((row) => row.entity.id)],
    );
  },
  async reset(tx: Queryable) {
    await tx.query('delete from entity_names');
    await tx.query('delete from entities');
  },
};
