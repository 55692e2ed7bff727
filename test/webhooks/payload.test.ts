import { describe, expect, it } from 'vitest';
import type { DeliveryCreatedData } from '../../src/delivery/delivery.ts';
import { createDeliveryIds } from '../../src/delivery/ids.ts';
import type { MatchedData } from '../../src/delivery/matched.ts';
import { WEBHOOK_BODY_LIMIT, WebhookBodyTooLargeError, webhookBody } from '../../src/webhooks/payload.ts';

const match: MatchedData = {
  matchId: 'm1',
  alertId: 'a1',
  projectId: 'p1',
  organizationId: 'o1',
  kind: 'ENTITY_MENTION',
  entityId: 'e1',
  entityType: 'PERSON',
  sourceId: 'ep1',
  sourceType: 'EPISODE',
  detectedAt: '2026-11-20T10:00:00.000Z',
  mentionCount: 1,
  mentionVariants: ['Jensen'],
  relevance: 'on_target',
  roles: ['HOST'],
  windows: [
    {
      start_seconds: 0,
      end_seconds: 9,
      lines: [
        { number: 1, start_seconds: 0, end_seconds: 9, text: 'Jensen!', is_mention: true, speaker: 'H' },
      ],
    },
  ],
  truncated: false,
  isBackfilled: false,
  episode: {
    podcast_id: 'p',
    podcast_title: 'Pod',
    title: 'Ep',
    duration_seconds: 60,
    published_at: '2026-11-20T00:00:00Z',
  },
};
const created: DeliveryCreatedData = {
  deliveryId: 'd1',
  type: 'alert.match',
  alert: { id: 'a1', kind: 'ENTITY_MENTION', title: 'T', project_id: 'p1', organization_id: 'o1' },
  channel: 'WEBHOOK',
  target: { type: 'WEBHOOK', webhookConnectionId: 'w1' },
  cadence: 'REALTIME',
  matchIds: ['m1'],
  summaries: { m1: 'A summary.' },
  createdAt: '2026-11-20T10:00:01.000Z',
};

/** The same value with every object's keys reversed, as a store that reorders keys returns it. */
function reversedKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(reversedKeys) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, reversedKeys(v)]),
  ) as T;
}

describe('webhook body', () => {
  it('comes out byte-identical whatever order the stored keys come back in', () => {
    const body = webhookBody(created, new Map([['m1', match]]));
    expect(webhookBody(reversedKeys(created), new Map([['m1', reversedKeys(match)]]))).toBe(body);
    const parsed = JSON.parse(body);
    expect(Object.keys(parsed)).toEqual([
      'type',
      'delivery_id',
      'created_at',
      'alert',
      'match_count',
      'matches',
    ]);
    expect(parsed.matches[0]).toMatchObject({ id: 'm1', llm_summary: 'A summary.', monitor_id: 'a1' });
    expect(Object.keys(parsed.matches[0].windows[0].lines[0])).toEqual([
      'number',
      'start_seconds',
      'end_seconds',
      'text',
      'is_mention',
      'speaker',
    ]);
  });
});

describe('delivery ids', () => {
  it('are 22 base62 characters, the same for the same inputs, different per key, channel and window', () => {
    const ids = createDeliveryIds(Buffer.alloc(32, 1));
    const id = ids.realtime('m1', 'webhook:w1');
    expect(id).toMatch(/^[0-9A-Za-z]{22}$/);
    expect(ids.realtime('m1', 'webhook:w1')).toBe(id);
    expect(ids.realtime('m1', 'email')).not.toBe(id);
    expect(createDeliveryIds(Buffer.alloc(32, 2)).realtime('m1', 'webhook:w1')).not.toBe(id);
    const monday = new Date('2026-11-23T00:00:00Z');
    expect(ids.digest('a1', 'email', 'WEEKLY', monday)).not.toBe(ids.digest('a1', 'email', 'DAILY', monday));
  });

  it('is the JSON of the whole body, and stops with WebhookBodyTooLargeError at the first match past the limit', () => {
    const digest: DeliveryCreatedData = {
      ...created,
      type: 'alert.digest',
      matchIds: ['m1', 'm2', 'gone', 'm3'],
    };
    const matches = new Map(['m1', 'm2', 'm3'].map((id) => [id, { ...match, matchId: id }]));
    const body = webhookBody(digest, matches);
    const parsed = JSON.parse(body);
    expect(body).toBe(JSON.stringify(parsed));
    expect(parsed.match_count).toBe(3);
    expect(parsed.matches.map((m: { id: string }) => m.id)).toEqual(['m1', 'm2', 'm3']);
    const bytes = Buffer.byteLength(body);
    expect(webhookBody(digest, matches, bytes)).toBe(body);
    let thrown: unknown;
    try {
      webhookBody(digest, matches, bytes - 1);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(WebhookBodyTooLargeError);
    expect((thrown as Error).message).toBe(
      `the webhook body would be over ${bytes - 1} bytes (passed at match 3 of 3), so nothing was sent; ` +
        'the matches are served by GET /v1/alerts/deliveries/d1?view=detailed',
    );
    expect(WEBHOOK_BODY_LIMIT).toBe(32 * 1024 * 1024);
  });
});
