import { advanceEpisodeVersions, resetEpisodeVersions } from '../../src/catalog/episode-versions.ts';
import { formatLabels } from '../../src/catalog/format-rules.ts';
import { lockPodcastList } from '../../src/catalog/podcast-list-locks.ts';
import type { Queryable } from '../../src/db/db.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import { speakerRoleOrUnknown } from '../../src/matching/engine/roles.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';

const NAME = 'podcast_formats';

/** An episode's speakers and their roles: the speakers list, else the distinct speakers of its lines. */
function speakerRoles(event: EpisodeTranscribed): string[] {
  const roles = new Map<string, string>();
  for (const s of event.speakers ?? []) roles.set(s.id ?? s.name ?? '', speakerRoleOrUnknown(s.role));
  if (roles.size === 0)
    for (const line of event.transcript?.lines ?? []) {
      const key = line.speaker_id ?? line.speaker;
      if (key !== undefined && !roles.has(key)) roles.set(key, speakerRoleOrUnknown(line.role));
    }
  return [...roles.values()];
}

function facts(event: EpisodeTranscribed) {
  const roles = speakerRoles(event);
  return {
    episode_id: event.episode.id,
    podcast_id: event.podcast.id,
    published_at: event.episode.published_at,
    duration_seconds: event.episode.duration_seconds,
    analyzed: (event.transcript?.lines?.length ?? 0) > 0,
    has_guest: roles.includes('GUEST'),
    has_panel: roles.includes('PANELIST') || roles.filter((r) => r !== 'HOST').length >= 3,
    has_caller: roles.includes('CALLER'),
    has_ads: (event.ads ?? []).some((ad) => !ad.is_network_promo),
    solo: roles.length === 1,
    has_video: (event.episode.videos?.length ?? 0) > 0,
  };
}

interface Aggregate {
  podcast_id: string;
  episode_count: number;
  analyzed: number;
  guest: number;
  panel: number;
  call_in: number;
  ads: number;
  solo: number;
  has_video: boolean;
  publish_days: Record<string, number>;
  avg_minutes: number | null;
  median: number | null;
  p25: number | null;
  p75: number | null;
  first_at: Date;
  latest_at: Date;
}

/** Recomputes the aggregate of each podcast from its episodes' facts; a podcast left with none loses it. */
async function recompute(tx: Queryable, podcastIds: string[]) {
  const { rows } = await tx.query<Aggregate>(
    `select podcast_id, count(*)::int as episode_count,
            count(*) filter (where analyzed)::int as analyzed,
            count(*) filter (where analyzed and has_guest)::int as guest,
            count(*) filter (where analyzed and has_panel)::int as panel,
            count(*) filter (where analyzed and has_caller)::int as call_in,
            count(*) filter (where analyzed and has_ads)::int as ads,
            count(*) filter (where analyzed and solo)::int as solo,
            bool_or(has_video) as has_video,
            jsonb_build_object(
              'monday', count(*) filter (where extract(isodow from published_at at time zone 'UTC') = 1),
              'tuesday', count(*) filter (where extract(isodow from published_at at time zone 'UTC') = 2),
              'wednesday', count(*) filter (where extract(isodow from published_at at time zone 'UTC') = 3),
              'thursday', count(*) filter (where extract(isodow from published_at at time zone 'UTC') = 4),
              'friday', count(*) filter (where extract(isodow from published_at at time zone 'UTC') = 5),
              'saturday', count(*) filter (where extract(isodow from published_at at time zone 'UTC') = 6),
              'sunday', count(*) filter (where extract(isodow from published_at at time zone 'UTC') = 7)
            ) as publish_days,
            avg(duration_seconds / 60.0) filter (where duration_seconds > 0)::float8 as avg_minutes,
            (percentile_cont(0.5) within group (order by duration_seconds / 60.0)
               filter (where duration_seconds > 0))::float8 as median,
            (percentile_cont(0.25) within group (order by duration_seconds / 60.0)
               filter (where duration_seconds > 0))::float8 as p25,
            (percentile_cont(0.75) within group (order by duration_seconds / 60.0)
               filter (where duration_seconds > 0))::float8 as p75,
            min(published_at) as first_at, max(published_at) as latest_at
       from podcast_format_episodes where podcast_id = any($1::text[])
      group by podcast_id`,
    [podcastIds],
  );
  await lockPodcastList(tx, podcastIds);
  await tx.query('delete from podcast_formats where podcast_id = any($1::text[])', [podcastIds]);
  if (rows.length === 0) return;
  const formats = rows.map((row) => {
    const labels = formatLabels({
      analyzed: row.analyzed,
      guest: row.guest,
      panel: row.panel,
      callIn: row.call_in,
      ads: row.ads,
      solo: row.solo,
    });
    return {
      podcast_id: row.podcast_id,
      episode_count: row.episode_count,
      analyzed_episodes: row.analyzed,
      ad_episode_rate: labels.rates.ads,
      call_in_episode_rate: labels.rates.callIn,
      guest_episode_rate: labels.rates.guest,
      panel_episode_rate: labels.rates.panel,
      solo_episode_rate: labels.rates.solo,
      has_video: row.has_video,
      publish_days: row.publish_days,
      avg_episode_minutes: row.avg_minutes,
      episode_minutes_median: row.median,
      episode_minutes_p25: row.p25,
      episode_minutes_p75: row.p75,
      first_episode_published_at: row.first_at,
      latest_episode_published_at: row.latest_at,
      guest_frequency: labels.guestFrequency ?? null,
      has_ads: labels.hasAds ?? null,
      signals: labels.signals,
    };
  });
  await tx.query(
    `insert into podcast_formats (podcast_id, episode_count, analyzed_episodes, ad_episode_rate,
            call_in_episode_rate, guest_episode_rate, panel_episode_rate, solo_episode_rate, has_video,
            publish_days, avg_episode_minutes, episode_minutes_median, episode_minutes_p25,
            episode_minutes_p75, first_episode_published_at, latest_episode_published_at,
            guest_frequency, has_ads, signals, computed_at)
     select r.podcast_id, r.episode_count, r.analyzed_episodes, r.ad_episode_rate, r.call_in_episode_rate,
            r.guest_episode_rate, r.panel_episode_rate, r.solo_episode_rate, r.has_video, r.publish_days,
            r.avg_episode_minutes, r.episode_minutes_median, r.episode_minutes_p25, r.episode_minutes_p75,
            r.first_episode_published_at, r.latest_episode_published_at, r.guest_frequency, r.has_ads,
            array(select jsonb_array_elements_text(r.signals)), now()
       from jsonb_to_recordset($1::jsonb) as r(podcast_id text, episode_count integer,
            analyzed_episodes integer, ad_episode_rate float8, call_in_episode_rate float8,
            guest_episode_rate float8, panel_episode_rate float8, solo_episode_rate float8,
            has_video boolean, publish_days jsonb, avg_episode_minutes float8,
            episode_minutes_median float8, episode_minutes_p25 float8, episode_minutes_p75 float8,
            first_episode_published_at timestamptz, latest_episode_published_at timestamptz,
            guest_frequency text, has_ads boolean, signals jsonb)`,
    [JSON.stringify(formats)],
  );
}

/**
 * Each show's format profile, recomputed from its episodes' facts whenever one of them changes.
 * An episode that moves to another podcast is recomputed in both.
 */
export const podcastFormatsProjection: Projection = {
  name: NAME,
  eventTypes: ['EpisodeTranscribed'],
  async apply(tx: Queryable, events: readonly RecordedEvent[]) {
    const episodes = await advanceEpisodeVersions(tx, NAME, events);
    if (episodes.length === 0) return;
    const ids = episodes.map((e) => e.episode.id);
    const { rows: previous } = await tx.query<{ podcast_id: string }>(
      'delete from podcast_format_episodes where episode_id = any($1::text[]) returning podcast_id',
      [ids],
    );
    await tx.query(
      `insert into podcast_format_episodes (episode_id, podcast_id, published_at, duration_seconds, analyzed,
              has_guest, has_panel, has_caller, has_ads, solo, has_video)
       select r.episode_id, r.podcast_id, r.published_at, r.duration_seconds, r.analyzed, r.has_guest,
              r.has_panel, r.has_caller, r.has_ads, r.solo, r.has_video
         from jsonb_to_recordset($1::jsonb) as r(episode_id text, podcast_id text, published_at timestamptz,
              duration_seconds integer, analyzed boolean, has_guest boolean, has_panel boolean,
              has_caller boolean, has_ads boolean, solo boolean, has_video boolean)`,
      [JSON.stringify(episodes.map(facts))],
    );
    const podcasts = new Set([...previous.map((r) => r.podcast_id), ...episodes.map((e) => e.podcast.id)]);
    await recompute(tx, [...podcasts]);
  },
  async reset(tx: Queryable) {
    await tx.query('delete from podcast_formats');
    await tx.query('delete from podcast_format_episodes');
    await resetEpisodeVersions(tx, NAME);
  },
};
