import { advanceEpisodeVersions, resetEpisodeVersions } from '../../src/catalog/episode-versions.ts';
import type { Queryable } from '../../src/db/db.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';

const NAME = 'ad_facts';

/** One row per sponsor of an episode: its ads (network promos excluded) and its company. */
function factsOf(event: EpisodeTranscribed) {
  const bySponsor = new Map<string, { ads: number; company_id: string | null }>();
  for (const ad of event.ads ?? []) {
    if (ad.is_network_promo) continue;
    const key = ad.sponsor.id ?? ad.sponsor.name;
    const fact = bySponsor.get(key) ?? { ads: 0, company_id: null };
    fact.ads += 1;
    fact.company_id = ad.sponsor.company_id ?? fact.company_id;
    bySponsor.set(key, fact);
  }
  return [...bySponsor].map(([sponsor, fact]) => ({
    episode_id: event.episode.id,
    podcast_id: event.podcast.id,
    published_at: event.episode.published_at,
    sponsor,
    ...fact,
  }));
}

/**
 * The leaderboard's facts: per (episode, sponsor) its ad count, with integer keys for sponsors and
 * shows (ad_keys). A re-sent episode replaces its facts.
 */
export const adFactsProjection: Projection = {
  name: NAME,
  eventTypes: ['EpisodeTranscribed'],
  async apply(tx: Queryable, events: readonly RecordedEvent[]) {
    const episodes = await advanceEpisodeVersions(tx, NAME, events);
    if (episodes.length === 0) return;
    await tx.query('delete from ad_facts where episode_id = any($1::text[])', [
      episodes.map((e) => e.episode.id),
    ]);
    const rows = episodes.flatMap(factsOf);
    if (rows.length === 0) return;
    const json = JSON.stringify(rows);
    await tx.query(
      `insert into ad_keys (kind, key)
       select distinct k.kind, k.key from jsonb_to_recordset($1::jsonb) as r(sponsor text, podcast_id text),
              lateral (values ('sponsor', r.sponsor), ('podcast', r.podcast_id)) as k(kind, key)
        order by 1, 2
       on conflict (kind, key) do nothing`,
      [json],
    );
    await tx.query(
      `insert into ad_facts (episode_id, sponsor_no, podcast_no, published_at, company_id, ads)
       select r.episode_id, s.no, p.no, r.published_at, r.company_id, r.ads
         from jsonb_to_recordset($1::jsonb) as r(episode_id text, podcast_id text, published_at timestamptz,
              sponsor text, ads int, company_id text)
         join ad_keys s on s.kind = 'sponsor' and s.key = r.sponsor
         join ad_keys p on p.kind = 'podcast' and p.key = r.podcast_id`,
      [json],
    );
  },
  async reset(tx: Queryable) {
    await tx.query('delete from ad_facts');
    await resetEpisodeVersions(tx, NAME);
  },
};
