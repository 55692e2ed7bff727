import { describe, expect, it } from 'vitest';
import { decodeMessage, encodeEvent, headerText } from '../../src/kafka/messages.ts';
import { TOPICS } from '../../src/kafka/topics.ts';
import { entityEvent, episodeEvent } from '../fixtures/events.ts';

const message = (topic: string, key: string | null, value: string | Buffer | null) => ({
  topic,
  key: key === null ? null : Buffer.from(key),
  value: typeof value === 'string' ? Buffer.from(value) : value,
});

describe('decodeMessage', () => {
  it('decodes a valid episode keyed by its episode id on the episodes topic', () => {
    const event = episodeEvent({ id: 'ep-1' });
    expect(decodeMessage(message(TOPICS.episodes, 'ep-1', JSON.stringify(event)))).toEqual({
      ok: true,
      event,
    });
  });

  it('decodes a valid entity keyed by its entity id on the entities topic', () => {
    const event = entityEvent({ id: 'ent-1', name: 'Jensen Huang' });
    expect(decodeMessage(message(TOPICS.entities, 'ent-1', JSON.stringify(event)))).toEqual({
      ok: true,
      event,
    });
  });

  it('applies the ingestion timestamp bounds: UTC years 1–9999, occurred_at at most a day ahead of the clock', () => {
    const yearZero = episodeEvent({ id: 'ep-1', publishedAt: '0001-01-01T00:00:00+01:00' });
    const future = { ...episodeEvent({ id: 'ep-1' }), occurred_at: '2026-11-22T10:00:00Z' };
    const now = new Date('2026-11-20T10:00:00Z');
    const decode = (event: object) =>
      decodeMessage(message(TOPICS.episodes, 'ep-1', JSON.stringify(event)), TOPICS, now);
    expect(decode(yearZero)).toMatchObject({ ok: false, errors: [{ location: '/episode/published_at' }] });
    expect(decode(future)).toMatchObject({ ok: false, errors: [{ location: '/occurred_at' }] });
  });

  it('rejects a message without a value (a tombstone)', () => {
    expect(decodeMessage(message(TOPICS.episodes, 'ep-1', null))).toEqual({
      ok: false,
      errors: [{ location: '/', message: 'is empty: expected one JSON event' }],
    });
  });

  it('rejects bytes that are not UTF-8', () => {
    expect(decodeMessage(message(TOPICS.episodes, 'ep-1', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])))).toEqual({
      ok: false,
      errors: [{ location: '/', message: 'is not UTF-8 text' }],
    });
  });

  it('rejects text that is not JSON, saying why', () => {
    const decoded = decodeMessage(message(TOPICS.episodes, 'ep-1', '{"type": "episode.transcribed",'));
    expect(decoded.ok).toBe(false);
    expect(!decoded.ok && decoded.errors).toEqual([
      { location: '/', message: expect.stringMatching(/^is not JSON: /) },
    ]);
  });

  it('rejects an event that breaks its schema with one error per problem, located by JSON pointer', () => {
    const event = episodeEvent({ id: 'ep-1' }) as unknown as { episode: Record<string, unknown> };
    delete event.episode.title;
    event.episode.duration_seconds = 'long';
    const decoded = decodeMessage(message(TOPICS.episodes, 'ep-1', JSON.stringify(event)));
    expect(decoded.ok).toBe(false);
    const locations = !decoded.ok ? decoded.errors.map((error) => error.location).sort() : [];
    expect(locations).toEqual(['/episode/duration_seconds', '/episode/title']);
  });

  it('rejects an unknown event type', () => {
    const decoded = decodeMessage(
      message(TOPICS.episodes, 'ep-1', JSON.stringify({ type: 'episode.deleted' })),
    );
    expect(decoded).toEqual({
      ok: false,
      errors: [
        {
          location: '/type',
          message: 'must be one of entity.upserted, episode.transcribed, podcast.upserted, ranking.captured',
          value: 'episode.deleted',
        },
      ],
    });
  });

  it('rejects an entity sent to the episodes topic, naming the topic it belongs on', () => {
    const event = entityEvent({ id: 'ent-1', name: 'Nvidia' });
    expect(decodeMessage(message(TOPICS.episodes, 'ent-1', JSON.stringify(event)))).toEqual({
      ok: false,
      errors: [
        {
          location: '/type',
          message: 'belongs on topic earshot.entities, not earshot.episodes',
          value: 'entity.upserted',
        },
      ],
    });
  });

  it('rejects an episode whose message has no key', () => {
    const event = episodeEvent({ id: 'ep-1' });
    expect(decodeMessage(message(TOPICS.episodes, null, JSON.stringify(event)))).toEqual({
      ok: false,
      errors: [
        {
          location: '/episode/id',
          message: 'must equal the message key, but the message has no key',
          value: 'ep-1',
        },
      ],
    });
  });

  it('rejects an entity keyed by something other than its id', () => {
    const event = entityEvent({ id: 'ent-1', name: 'Nvidia' });
    expect(decodeMessage(message(TOPICS.entities, 'nvidia', JSON.stringify(event)))).toEqual({
      ok: false,
      errors: [
        {
          location: '/entity/id',
          message: 'must equal the message key, but the message key is "nvidia"',
          value: 'ent-1',
        },
      ],
    });
  });

  it('reads topic names from the topics it is given', () => {
    const topics = {
      episodes: 'eps',
      entities: 'ents',
      podcasts: 'pods',
      rankings: 'ranks',
      deadLetter: 'dl',
    };
    const event = episodeEvent({ id: 'ep-9' });
    expect(decodeMessage(message('eps', 'ep-9', JSON.stringify(event)), topics)).toEqual({ ok: true, event });
    expect(decodeMessage(message(TOPICS.episodes, 'ep-9', JSON.stringify(event)), topics).ok).toBe(false);
  });
});

describe('encodeEvent', () => {
  it('sends an episode to the episodes topic keyed by its episode id', () => {
    const event = episodeEvent({ id: 'ep-2' });
    const { topic, message: encoded } = encodeEvent(event);
    expect(topic).toBe('earshot.episodes');
    expect(encoded.key).toBe('ep-2');
    expect(JSON.parse(String(encoded.value))).toEqual(event);
  });

  it('sends an entity to the entities topic keyed by its entity id', () => {
    const { topic, message: encoded } = encodeEvent(entityEvent({ id: 'ent-2', name: 'Arm' }));
    expect(topic).toBe('earshot.entities');
    expect(encoded.key).toBe('ent-2');
  });

  it("keeps the producer's own JSON text byte for byte", () => {
    const event = entityEvent({ id: 'ent-3', name: 'Arm' });
    const text = `{ "type": "entity.upserted", ${JSON.stringify(event).slice(1)}`;
    expect(encodeEvent(event, TOPICS, text).message.value).toBe(text);
  });

  it('round-trips through decodeMessage', () => {
    const event = episodeEvent({ id: 'ep-3' });
    const { topic, message: encoded } = encodeEvent(event);
    expect(
      decodeMessage({
        topic,
        key: Buffer.from(String(encoded.key)),
        value: Buffer.from(String(encoded.value)),
      }),
    ).toEqual({ ok: true, event });
  });
});

describe('headerText', () => {
  it('reads Buffer, string and repeated header values, the last repeat winning', () => {
    const headers = { a: Buffer.from('x'), b: 'y', c: [Buffer.from('1'), Buffer.from('2')] };
    expect([
      headerText(headers, 'a'),
      headerText(headers, 'b'),
      headerText(headers, 'c'),
      headerText(headers, 'd'),
    ]).toEqual(['x', 'y', '2', undefined]);
  });
});
