import { createHash } from 'node:crypto';
import type { CatalogTopic } from '../ingestion/catalog-events.ts';

/** A topic's ancestry: as sent, else its slug (a root topic), else its id. */
export const topicAncestry = (topic: CatalogTopic) => topic.ancestry ?? topic.slug ?? topic.id;

/** The ancestry path hash a topic_id may be given as: the first 16 hex digits of SHA-256(ancestry). */
export const ancestryPathHash = (ancestry: string) =>
  createHash('sha256').update(ancestry).digest('hex').slice(0, 16);
