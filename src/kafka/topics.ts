import type { Admin, ITopicConfig } from 'kafkajs';
import type { IngestEvent } from '../ingestion/events.ts';
import { chartKey } from '../ingestion/ranking-captured.ts';

/** The ingestion topics (docs/kafka.md, Topics). Tests pass their own names to stay apart. */
export interface Topics {
  episodes: string;
  entities: string;
  rankings: string;
  podcasts: string;
  deadLetter: string;
}

export const TOPICS: Topics = {
  episodes: 'earshot.episodes',
  entities: 'earshot.entities',
  podcasts: 'earshot.podcasts',
  rankings: 'earshot.rankings',
  deadLetter: 'earshot.dead-letter',
};

/**
 * The topic and key of a producer event. Keying by episode or entity id puts every version of one
 * episode (or entity) on one partition, so they are appended in the order they were produced.
 */
export function routeEvent(event: IngestEvent, topics: Topics = TOPICS): { topic: string; key: string } {
  if (event.type === 'ranking.captured') return { topic: topics.rankings, key: chartKey(event.chart) };
  if (event.type === 'podcast.upserted') return { topic: topics.podcasts, key: event.podcast.id };
  return event.type === 'episode.transcribed'
    ? { topic: topics.episodes, key: event.episode.id }
    : { topic: topics.entities, key: event.entity.id };
}

/** The topics the ingestion worker consumes. */
export const ingestTopics = (topics: Topics) => [
  topics.episodes,
  topics.entities,
  topics.podcasts,
  topics.rankings,
];

/** The event type a topic carries, or undefined for a topic that carries no producer events. */
export function eventTypeOfTopic(topic: string, topics: Topics = TOPICS): IngestEvent['type'] | undefined {
  if (topic === topics.episodes) return 'episode.transcribed';
  if (topic === topics.entities) return 'entity.upserted';
  if (topic === topics.rankings) return 'ranking.captured';
  if (topic === topics.podcasts) return 'podcast.upserted';
  return undefined;
}

/**
 * What earshot creates when a topic is missing. Partitions and replication come from the broker's
 * `num.partitions` and `default.replication.factor`; dead letters are kept until someone deals with them.
 */
export function topicsToCreate(topics: Topics = TOPICS): ITopicConfig[] {
  return [
    { topic: topics.episodes },
    { topic: topics.entities },
    { topic: topics.podcasts },
    { topic: topics.rankings },
    { topic: topics.deadLetter, configEntries: [{ name: 'retention.ms', value: '-1' }] },
  ];
}

/** Creates the topics that do not exist yet; returns their names. Safe to run from several processes at once. */
export async function ensureTopics(admin: Admin, topics: Topics = TOPICS): Promise<string[]> {
  const existing = new Set(await admin.listTopics());
  const missing = topicsToCreate(topics).filter((config) => !existing.has(config.topic));
  if (missing.length === 0) return [];
  await admin.createTopics({ topics: missing, waitForLeaders: true });
  return missing.map((config) => config.topic);
}
