import { describe, expect, it } from 'vitest';
import { eventTypeOfTopic, routeEvent, TOPICS, topicsToCreate } from '../../src/kafka/topics.ts';
import { entityEvent, episodeEvent } from '../fixtures/events.ts';
import { rankingEvent } from '../fixtures/rankings.ts';

describe('topics', () => {
  it('are the names docs/kafka.md gives', () => {
    expect(TOPICS).toEqual({
      episodes: 'earshot.episodes',
      entities: 'earshot.entities',
      podcasts: 'earshot.podcasts',
      rankings: 'earshot.rankings',
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

  it('route a chart capture by its chart key', () => {
    expect(routeEvent(rankingEvent({ category: { slug: 'technology' } }))).toEqual({
      topic: 'earshot.rankings',
      key: 'apple/top_podcasts/us/technology',
    });
    expect(routeEvent(rankingEvent({ source: 'spotify', country: 'gb' })).key).toBe(
      'spotify/top_podcasts/gb/',
    );
  });

  it('say which event type each ingestion topic carries, and none for the dead-letter topic', () => {
    expect(eventTypeOfTopic('earshot.episodes')).toBe('episode.transcribed');
    expect(eventTypeOfTopic('earshot.entities')).toBe('entity.upserted');
    expect(eventTypeOfTopic('earshot.podcasts')).toBe('podcast.upserted');
    expect(eventTypeOfTopic('earshot.rankings')).toBe('ranking.captured');
    expect(eventTypeOfTopic('earshot.dead-letter')).toBeUndefined();
  });

  it('keep dead letters without a time limit and leave partitions to the broker', () => {
    expect(topicsToCreate()).toEqual([
      { topic: 'earshot.episodes' },
      { topic: 'earshot.entities' },
      { topic: 'earshot.podcasts' },
      { topic: 'earshot.rankings' },
      { topic: 'earshot.dead-letter', configEntries: [{ name: 'retention.ms', value: '-1' }] },
    ]);
  });
});
