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

/**
 * Each episode's links (guests, sponsors, topics, categories) and, per show, the same links counted
 * over its episodes. A re-sent episode replaces its rows; the shows it touched are recounted.
 */
export const podcastLinksProjection: Projection = {
  name: NAME,
  eventTypes: ['EpisodeTranscribed'],
  async apply(tx: Queryable, events: readonly RecordedEvent[]) {
    const episodes = await advanceEpisodeVersions(tx, NAME, events);
    if (episodes.length === 0) return;
    const ids = episodes.map((e) => e.episode.id);
    const { rows: before } = await tx.query<{ podcast_id: string }>(
      'delete from podcast_link_episodes where episode_id = any($1::text[]) returning podcast_id',
      [ids],
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
    const podcasts = [...new Set([...before.map((r) => r.podcast_id), ...episodes.map((e) => e.podcast.id)])];
    await tx.query('delete from podcast_links where podcast_id = any($1::text[])', [podcasts]);
    await tx.query(
      `insert into podcast_links (podcast_id, kind, key, label, episode_count, last_at)
       select podcast_id, kind, key, max(label), count(*)::int, max(published_at)
         from podcast_link_episodes where podcast_id = any($1::text[])
        group by podcast_id, kind, key`,
      [podcasts],
    );
  },
  async reset(tx: Queryable) {
    await tx.query('delete from podcast_links');
    await tx.query('delete from podcast_link_episodes');
    await resetEpisodeVersions(tx, NAME);
  },
};
