import { eventLanguage } from '../../src/catalog/episode-language.ts';
import { advanceEpisodeVersions, resetEpisodeVersions } from '../../src/catalog/episode-versions.ts';
import { lockPodcastList } from '../../src/catalog/podcast-list-locks.ts';
import { searchKey } from '../../src/catalog/search-key.ts';
import { ancestryPathHash, topicAncestry } from '../../src/catalog/topics.ts';
import type { Queryable } from '../../src/db/db.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import { speakerRoleOrUnknown } from '../../src/matching/engine/roles.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';

const NAME = 'catalog_episodes';

function episodeRow(event: EpisodeTranscribed) {
  const { episode, podcast } = event;
  const entityIds = new Set<string>();
  for (const mention of event.mentions ?? []) entityIds.add(mention.entity_id);
  for (const speaker of event.speakers ?? []) if (speaker.entity_id) entityIds.add(speaker.entity_id);
  const mentioned = new Set((event.mentions ?? []).map((m) => m.entity_id));
  return {
    id: episode.id,
    podcast_id: podcast.id,
    slug: episode.slug ?? null,
    title: episode.title,
    search_title: searchKey(episode.title),
    description: episode.description ?? null,
    audio_url: episode.audio_url ?? null,
    image_url: episode.image_url ?? null,
    url: episode.url ?? null,
    language: eventLanguage(event) ?? null,
    explicit: episode.explicit ?? null,
    episode_number: episode.episode_number ?? null,
    duration_seconds: episode.duration_seconds,
    published_at: episode.published_at,
    has_transcript: (event.transcript?.lines?.length ?? 0) > 0,
    entity_count: mentioned.size,
    clip_count: event.clips?.length ?? 0,
    segment_count: event.segments?.length ?? 0,
    entity_ids: [...entityIds],
    speakers: (event.speakers ?? []).map((s) => ({ ...s, role: speakerRoleOrUnknown(s.role) })),
    topics: episode.topics ?? [],
    videos: episode.videos ?? [],
  };
}

function topicRows(event: EpisodeTranscribed) {
  const seen = new Set<string>();
  return (event.episode.topics ?? []).flatMap((topic) => {
    if (seen.has(topic.id)) return [];
    seen.add(topic.id);
    const ancestry = topicAncestry(topic);
    return [
      {
        episode_id: event.episode.id,
        podcast_id: event.podcast.id,
        topic_id: topic.id,
        name: topic.name,
        slug: topic.slug ?? null,
        ancestry,
        ancestry_path: ancestryPathHash(ancestry),
      },
    ];
  });
}

/** Counts again, for these shows, the episodes at or below each ancestry (the topic_id filter). */
async function refreshTopicShares(tx: Queryable, podcastIds: string[]) {
  await lockPodcastList(tx, podcastIds);
  await tx.query('delete from podcast_topic_shares where podcast_id = any($1::text[])', [podcastIds]);
  await tx.query(
    `insert into podcast_topic_shares (ancestry, podcast_id, episode_count)
     select prefix, t.podcast_id, count(distinct t.episode_id)
       from catalog_episode_topics t, unnest(topic_prefixes(array[t.ancestry])) prefix
      where t.podcast_id = any($1::text[])
      group by prefix, t.podcast_id`,
    [podcastIds],
  );
}

/**
 * The catalog's episodes with their speakers, topics and videos, and each show's topic shares. A
 * re-sent episode replaces the stored one (and its topics) unless it is older than what is stored.
 */
export const catalogEpisodesProjection: Projection = {
  name: NAME,
  eventTypes: ['EpisodeTranscribed'],
  async apply(tx: Queryable, events: readonly RecordedEvent[]) {
    const episodes = await advanceEpisodeVersions(tx, NAME, events);
    if (episodes.length === 0) return;
    await tx.query(
      `insert into catalog_episodes (id, podcast_id, slug, title, search_title, description, audio_url,
              image_url, url, language, explicit, episode_number, duration_seconds, published_at,
              has_transcript, entity_count, clip_count, segment_count, entity_ids, speakers, topics, videos)
       select r.id, r.podcast_id, r.slug, r.title, r.search_title, r.description, r.audio_url, r.image_url,
              r.url, r.language, r.explicit, r.episode_number, r.duration_seconds, r.published_at,
              r.has_transcript, r.entity_count, r.clip_count, r.segment_count,
              array(select jsonb_array_elements_text(r.entity_ids)), r.speakers, r.topics, r.videos
         from jsonb_to_recordset($1::jsonb) as r(id text, podcast_id text, slug text, title text,
              search_title text, description text, audio_url text, image_url text, url text, language text,
              explicit boolean, episode_number integer, duration_seconds integer, published_at timestamptz,
              has_transcript boolean, entity_count integer, clip_count integer, segment_count integer,
              entity_ids jsonb, speakers jsonb, topics jsonb, videos jsonb)
       on conflict (id) do update set
              podcast_id = excluded.podcast_id, slug = excluded.slug, title = excluded.title,
              search_title = excluded.search_title, description = excluded.description,
              audio_url = excluded.audio_url, image_url = excluded.image_url, url = excluded.url,
              language = excluded.language, explicit = excluded.explicit,
              episode_number = excluded.episode_number, duration_seconds = excluded.duration_seconds,
              published_at = excluded.published_at, has_transcript = excluded.has_transcript,
              entity_count = excluded.entity_count, clip_count = excluded.clip_count,
              segment_count = excluded.segment_count, entity_ids = excluded.entity_ids,
              speakers = excluded.speakers, topics = excluded.topics, videos = excluded.videos,
              updated_at = now()`,
      [JSON.stringify(episodes.map(episodeRow))],
    );
    const { rows: replaced } = await tx.query<{ podcast_id: string }>(
      'delete from catalog_episode_topics where episode_id = any($1::text[]) returning podcast_id',
      [episodes.map((e) => e.episode.id)],
    );
    const topics = episodes.flatMap(topicRows);
    if (topics.length)
      await tx.query(
        `insert into catalog_episode_topics (episode_id, podcast_id, topic_id, name, slug, ancestry, ancestry_path)
         select r.episode_id, r.podcast_id, r.topic_id, r.name, r.slug, r.ancestry, r.ancestry_path
           from jsonb_to_recordset($1::jsonb) as r(episode_id text, podcast_id text, topic_id text,
                name text, slug text, ancestry text, ancestry_path text)`,
        [JSON.stringify(topics)],
      );
    await refreshTopicShares(tx, [
      ...new Set([...replaced.map((r) => r.podcast_id), ...episodes.map((e) => e.podcast.id)]),
    ]);
  },
  async reset(tx: Queryable) {
    await tx.query('delete from catalog_episodes');
    await tx.query('delete from podcast_topic_shares');
    await resetEpisodeVersions(tx, NAME);
  },
};
