import {
  advanceEpisodeVersions,
  lastById,
  resetEpisodeVersions,
} from '../../src/catalog/episode-versions.ts';
import type { Queryable } from '../../src/db/db.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';

const NAME = 'ads';

const adRows = (event: EpisodeTranscribed) =>
  (event.ads ?? []).map((ad) => ({
    id: ad.id,
    episode_id: event.episode.id,
    podcast_id: event.podcast.id,
    published_at: event.episode.published_at,
    sponsor_id: ad.sponsor.id ?? null,
    sponsor_name: ad.sponsor.name,
    sponsor_company_id: ad.sponsor.company_id ?? null,
    product: ad.product ?? null,
    offer_description: ad.offer_description ?? null,
    sponsor_url: ad.sponsor_url ?? null,
    read_type: ad.read_type ?? null,
    placement_type: ad.placement_type ?? null,
    start_seconds: ad.start_seconds ?? null,
    end_seconds: ad.end_seconds ?? null,
    is_network_promo: ad.is_network_promo ?? false,
  }));

/** Each episode's ad reads; a re-sent episode replaces them. The advertising surface reads this model. */
export const adsProjection: Projection = {
  name: NAME,
  eventTypes: ['EpisodeTranscribed'],
  async apply(tx: Queryable, events: readonly RecordedEvent[]) {
    const episodes = await advanceEpisodeVersions(tx, NAME, events);
    if (episodes.length === 0) return;
    await tx.query('delete from ads where episode_id = any($1::text[])', [episodes.map((e) => e.episode.id)]);
    const rows = lastById(episodes.flatMap(adRows));
    if (rows.length === 0) return;
    await tx.query(
      `insert into ads (id, episode_id, podcast_id, published_at, sponsor_id, sponsor_name, sponsor_company_id,
              product, offer_description, sponsor_url, read_type, placement_type, start_seconds, end_seconds,
              is_network_promo)
       select r.id, r.episode_id, r.podcast_id, r.published_at, r.sponsor_id, r.sponsor_name,
              r.sponsor_company_id, r.product, r.offer_description, r.sponsor_url, r.read_type,
              r.placement_type, r.start_seconds, r.end_seconds, r.is_network_promo
         from jsonb_to_recordset($1::jsonb) as r(id text, episode_id text, podcast_id text,
              published_at timestamptz, sponsor_id text, sponsor_name text, sponsor_company_id text,
              product text, offer_description text, sponsor_url text, read_type text, placement_type text,
              start_seconds float8, end_seconds float8, is_network_promo boolean)
       on conflict (id) do update set episode_id = excluded.episode_id, podcast_id = excluded.podcast_id,
              published_at = excluded.published_at, sponsor_id = excluded.sponsor_id,
              sponsor_name = excluded.sponsor_name, sponsor_company_id = excluded.sponsor_company_id,
              product = excluded.product, offer_description = excluded.offer_description,
              sponsor_url = excluded.sponsor_url, read_type = excluded.read_type,
              placement_type = excluded.placement_type, start_seconds = excluded.start_seconds,
              end_seconds = excluded.end_seconds, is_network_promo = excluded.is_network_promo`,
      [JSON.stringify(rows)],
    );
  },
  async reset(tx: Queryable) {
    await tx.query('delete from ads');
    await resetEpisodeVersions(tx, NAME);
  },
};
