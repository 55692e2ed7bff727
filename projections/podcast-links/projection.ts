import { advanceEpisodeVersions, resetEpisodeVersions } from '../../src/catalog/episode-versions.ts';
import type { Queryable } from '../../src/db/db.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';

const NAME = 'podcast_links';

/** Speaker roles that are not appearances of a guest (docs/advertising.md, "Related shows"). */
const NOT_GUEST = new Set(['HOST', 'CO_HOST', 'PRODUCER', 'ANNOUNCER', 'ADVERTISER', 'NARRATOR', 'UNKNOWN']);

export type LinkKind = 'guest' | 'sponsor' | 'topic' | 'category';

interface LinkRow {
  episode_id: string;
  podcast_id: string;
  kind: LinkKind;
  key: string;
  label: string | null;
  published_at: string;
}

/** What one episode links its show to; one row per (kind, key). */
function linksOf(event: EpisodeTranscribed): LinkRow[] {
  const base = {
    episode_id: event.episode.id,
    podcast_id: event.podcast.id,
    published_at: event.episode.published_at,
  };
  const rows = new Map<string, LinkRow>();
  const add = (kind: LinkKind, key: string | undefined, label: string | null | undefined) => {
    if (key && !rows.has(`${kind}\u0000${key}`))
      rows.set(`${kind}\u0000${key}`, { ...base, kind, key, label: label ?? null });
  };
  for (const s of event.speakers ?? [])
    if (!NOT_GUEST.has((s.role ?? 'UNKNOWN').toUpperCase())) add('guest', s.person_id ?? s.entity_id, s.name);
  for (const ad of event.ads ?? [])
    if (!ad.is_network_promo) add('sponsor', ad.sponsor.id ?? ad.sponsor.name, ad.sponsor.name);
  for (const t of event.episode.topics ?? []) {
    add('topic', t.id, JSON.stringify({ name: t.name, slug: t.slug, ancestry: t.ancestry }));
    add('category', (t.ancestry ?? t.slug ?? t.id).split('/')[0], null);
  }
  return [...rows.values()];
}

/** One link row of a batch's change: +1 when an episode gains it, -1 when an episode loses it. */
interface LinkChange {
  podcast_id: string;
  kind: string;
  key: string;
  label: string | null;
  /** As sent, or as PostgreSQL writes it (text: a Date would drop its microseconds). */
  published_at: string;
  n: 1 | -1;
}

/**
 * Each episode's links (guests, sponsors, topics, categories) and, per show, the same links counted
 * over its episodes. A re-sent episode replaces its rows. The shows' rows take the batch's changes
 * (counts added, the latest time and the greatest label kept) rather than being recounted whole: a
 * (show, kind, key) is recounted from its episodes only when an episode that left it may have held
 * its latest time or greatest label (docs/advertising.md, "Read models and worker").
 */
export const podcastLinksProjection: Projection = {
  name: NAME,
  eventTypes: ['EpisodeTranscribed'],
  async apply(tx: Queryable, events: readonly RecordedEvent[]) {
    const episodes = await advanceEpisodeVersions(tx, NAME, events);
    if (episodes.length === 0) return;
    const { rows: removed } = await tx.query<Omit<LinkChange, 'n'>>(
      `delete from podcast_link_episodes where episode_id = any($1::text[])
       returning podcast_id, kind, key, label, published_at::text`,
      [episodes.map((e) => e.episode.id)],
    );
    const rows = episodes.flatMap(linksOf);
    if (rows.length)
      await tx.query(
        `insert into podcast_link_episodes (episode_id, podcast_id, kind, key, label, published_at)
         select r.episode_id, r.podcast_id, r.kind, r.key, r.label, r.published_at
           from jsonb_to_recordset($1::jsonb) as r(episode_id text, podcast_id text, kind text, key text,
                label text, published_at timestamptz)`,
        [JSON.stringify(rows)],
      );
    const changes: LinkChange[] = [
      ...removed.map((r) => ({ ...r, n: -1 as const })),
      ...rows.map(({ episode_id: _, ...r }) => ({ ...r, n: 1 as const })),
    ];
    if (changes.length) await countChanges(tx, changes);
  },
  async reset(tx: Queryable) {
    await tx.query('delete from podcast_links');
    await tx.query('delete from podcast_link_episodes');
    await resetEpisodeVersions(tx, NAME);
  },
};

/**
 * Applies a batch's link changes to podcast_links in two statements whatever the shows' sizes. Each
 * changed (show, kind, key) has its count moved by its net change and its last_at and label raised
 * to the greatest added; a row left with no episode goes. A row whose removed links may have held
 * its last_at or label (a removed value not below the row's, and none added as great) is recounted
 * from podcast_link_episodes instead. PostgreSQL compares, so labels order as max(label) orders them.
 */
async function countChanges(tx: Queryable, changes: readonly LinkChange[]) {
  const { rows: recount } = await tx.query<{ podcast_id: string; kind: string; key: string }>(
    `with c as (
       select podcast_id, kind, key, sum(n)::int as n, bool_or(n < 0) as removes,
              max(published_at) filter (where n > 0) as added_at, max(label) filter (where n > 0) as added_label,
              max(published_at) filter (where n < 0) as removed_at, max(label) filter (where n < 0) as removed_label
         from jsonb_to_recordset($1::jsonb) as r(podcast_id text, kind text, key text, label text,
              published_at timestamptz, n int)
        group by podcast_id, kind, key
     ),
     k as (
       select c.podcast_id, c.kind, c.key, c.n, coalesce(c.added_at, l.last_at) as at, c.added_label,
              coalesce(l.episode_count, 0) + c.n as count,
              c.removes and not coalesce(l.podcast_id is not null
                and (c.removed_at < l.last_at or c.added_at >= c.removed_at)
                and (c.removed_label is null or c.removed_label < l.label or c.added_label >= c.removed_label),
                false) as recount
         from c left join podcast_links l using (podcast_id, kind, key)
     ),
     gone as (
       delete from podcast_links l using k
        where l.podcast_id = k.podcast_id and l.kind = k.kind and l.key = k.key and (k.recount or k.count <= 0)
     ),
     kept as (
       insert into podcast_links as l (podcast_id, kind, key, label, episode_count, last_at)
       select podcast_id, kind, key, added_label, n, at from k where not recount and count > 0
       on conflict (podcast_id, kind, key) do update
          set episode_count = l.episode_count + excluded.episode_count,
              last_at = greatest(l.last_at, excluded.last_at), label = greatest(l.label, excluded.label)
     )
     select podcast_id, kind, key from k where recount`,
    [JSON.stringify(changes)],
  );
  if (recount.length)
    await tx.query(
      `insert into podcast_links (podcast_id, kind, key, label, episode_count, last_at)
       select e.podcast_id, e.kind, e.key, max(e.label), count(*)::int, max(e.published_at)
         from jsonb_to_recordset($1::jsonb) as t(podcast_id text, kind text, key text)
         join podcast_link_episodes e on e.podcast_id = t.podcast_id and e.kind = t.kind and e.key = t.key
        group by e.podcast_id, e.kind, e.key`,
      [JSON.stringify(recount)],
    );
}
