import { describe, expect, it } from 'vitest';
import { eventTypeOfTopic, routeEvent, TOPICS, topicsToCreate } from '../../src/kafka/topics.ts';
import { entityEvent, episodeEvent } from '../fixtures/events.ts';

describe('topics', () => {
  it('are the names contracts.md gives', () => {
    expect(TOPICS).toEqual({
      episodes: 'earshot.episodes',
      entities: 'earshot.entities',
      podcasts: 'earshot.podcasts',
      deadLetter: 'earshot.dead-letter',
    });
  });

  it('route episodes by episode id and entities by entity id', () => {
    expect(routeEvent(episodeEvent({ id: 'ep-1' }))).toEqual({ topic: 'earshot.episodes', key: 'ep-1' });
    expect(routeEvent(entityEvent({ id: 'ent-1', name: 'Arm' }))).toEqual({
      topic: 'earshot.entities',
      key: 'ent-1',
    });
  });

  it('say which event type each ingestion topic carries, and none for the dead-letter topic', () => {
    expect(eventTypeOfTopic('earshot.episodes')).toBe('episode.transcribed');
    expect(eventTypeOfTopic('earshot.entities')).toBe('entity.upserted');
    expect(eventTypeOfTopic('earshot.podcasts')).toBe('podcast.upserted');
    expect(eventTypeOfTopic('earshot.dead-letter')).toBeUndefined();
  });

  it('keep dead letters without a time limit and leave partitions to the broker', () => {
    expect(topicsToCreate()).toEqual([
      { topic: 'earshot.episodes' },
      { topic: 'earshot.entities' },
      { topic: 'earshot.podcasts' },
      { topic: 'earshot.dead-letter', configEntries: [{ name: 'retention.ms', value: '-1' }] },
    ]);
  });
});
