import { newestVersions } from '../../src/catalog/episode-versions.ts';
import type { Queryable } from '../../src/db/db.ts';
import type { RecordedEvent } from '../../src/eventstore/port.ts';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import type { Projection } from '../../src/subscriptions/projection.ts';

/**
 * The entities an episode mentions: those of its mentions[] and those linked to one of its
 * speakers (docs/knowledge-graph.md). Names found in the transcript without a producer mention
 * are the matcher's business and are not counted here.
 */
export const mentionedEntities = (episode: EpisodeTranscribed) => [
  ...new Set([
    ...(episode.mentions ?? []).map((mention) => mention.entity_id),
    ...(episode.speakers ?? []).flatMap((speaker) => (speaker.entity_id ? [speaker.entity_id] : [])),
  ]),
];

/**
 * The entity mentions read model: which entities each episode's newest version mentions. A
 * re-sent episode replaces its set unless it is older (occurred_at) than the stored one.
 */
export const entityMentionsProjection: Projection = {
  name: 'entity_mentions',
  eventTypes: ['EpisodeTranscribed'],
  async apply(tx: Queryable, events: readonly RecordedEvent[]) {
    const latest = newestVersions(events);
    if (latest.size === 0) return;
    const rows = [...latest.values()].map((episode) => ({
      episode_id: episode.episode.id,
      occurred_at: episode.occurred_at,
      entity_ids: mentionedEntities(episode),
    }));
    // Episodes whose stored version is newer keep their rows; the others are replaced whole.
    const { rows: pairs } = await tx.query<{ episode_id: string; entity_id: string }>(
      `with incoming as (
         select * from jsonb_to_recordset($1::jsonb) as r(episode_id text, occurred_at timestamptz, entity_ids jsonb)
       ), fresh as (
         select i.* from incoming i
          left join entity_mention_episodes s on s.episode_id = i.episode_id
          where s.episode_id is null or s.occurred_at <= i.occurred_at
       ), cleared as (
         delete from entity_mentions m using fresh f where m.episode_id = f.episode_id
       ), episodes as (
         insert into entity_mention_episodes (episode_id, occurred_at)
         select episode_id, occurred_at from fresh
         on conflict (episode_id) do update set occurred_at = excluded.occurred_at
         returning episode_id
       )
       select f.episode_id, jsonb_array_elements_text(f.entity_ids) as entity_id
         from fresh f join episodes using (episode_id)`,
      [JSON.stringify(rows)],
    );
    if (pairs.length === 0) return;
    await tx.query(
      `insert into entity_mentions (entity_id, episode_id)
       select * from unnest($1::text[], $2::text[]) on conflict do nothing`,
      [pairs.map((p) => p.entity_id), pairs.map((p) => p.episode_id)],
    );
  },
  async reset(tx: Queryable) {
    await tx.query('delete from entity_mention_episodes');
  },
};
