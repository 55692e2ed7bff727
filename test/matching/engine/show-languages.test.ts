import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../../src/eventstore/port.ts';
import type { PodcastUpserted } from '../../../src/ingestion/events.ts';
import { ShowLanguages } from '../../../src/matching/engine/show-languages.ts';

const upserted = (id: string, occurredAt: string, language?: string): RecordedEvent => ({
  id: `${id}-${occurredAt}-${language}`,
  streamId: `podcast-${id}`,
  revision: 0,
  position: '1/1',
  type: 'PodcastUpserted',
  data: {
    type: 'podcast.upserted',
    event_id: 'e',
    occurred_at: occurredAt,
    podcast: { id, title: 'Show', ...(language ? { language } : {}) },
  } satisfies PodcastUpserted,
  metadata: {},
  recordedAt: new Date(),
});

describe("the realtime matcher's show languages", () => {
  it('keeps the language of the latest occurred_at, the later event on a tie, as the podcasts read model', () => {
    const shows = new ShowLanguages();
    expect(shows.of('p')).toBeUndefined();
    shows.apply(upserted('p', '2026-11-20T10:00:00Z', 'en'));
    shows.apply(upserted('p', '2026-11-19T10:00:00Z', 'de'));
    expect(shows.of('p')).toBe('en');
    shows.apply(upserted('p', '2026-11-20T10:00:00.000Z', 'fr'));
    expect(shows.of('p')).toBe('fr');
    shows.apply(upserted('p', '2026-11-21T10:00:00+02:00', 'it'));
    expect(shows.of('p')).toBe('it');
  });

  it('is not cleared by an event without a language, and ignores other events', () => {
    const shows = new ShowLanguages();
    shows.apply(upserted('p', '2026-11-20T10:00:00Z', 'en'));
    shows.apply(upserted('p', '2026-11-22T10:00:00Z'));
    shows.apply({ ...upserted('p', '2026-11-23T10:00:00Z', 'de'), type: 'EntityUpserted' });
    expect(shows.of('p')).toBe('en');
    expect(shows.of('q')).toBeUndefined();
  });
});
