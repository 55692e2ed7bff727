import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchesProjection } from '../../../projections/matches/projection.ts';
import { listAlertMatches } from '../../../projections/matches/queries.ts';
import type { Db } from '../../../src/db/db.ts';
import type { RecordedEvent } from '../../../src/eventstore/port.ts';
import type { AlertMatchedEventData } from '../../../src/matching/streams.ts';
import { createDb, ENGINES } from '../../support/db.ts';

let position = 0;
function recorded(type: string, data: unknown): RecordedEvent {
  position++;
  return {
    id: `ev-${position}`,
    streamId: 'match-x',
    revision: 0,
    position: `1/${position}`,
    type,
    data,
    metadata: {},
    recordedAt: new Date(),
  };
}

function match(id: string, overrides: Partial<AlertMatchedEventData> = {}): AlertMatchedEventData {
  return {
    matchId: id,
    alertId: 'alert-1',
    projectId: 'project-1',
    organizationId: 'org-1',
    kind: 'ENTITY_MENTION',
    entityId: 'ent-1',
    entityType: 'COMPANY',
    sourceId: `episode-${id}`,
    sourceType: 'EPISODE',
    detectedAt: '2026-11-20T12:00:00.000Z',
    mentionCount: 1,
    mentionVariants: ['Acme'],
    relevance: 'on_target',
    roles: ['HOST'],
    windows: [],
    truncated: false,
    isBackfilled: false,
    language: 'en-US',
    episode: {
      podcast_id: 'pod-1',
      podcast_title: 'Pod',
      title: 'Ep',
      duration_seconds: 60,
      published_at: '2026-11-20T06:00:00.000Z',
      podcast_popularity: 0.5,
    },
    ...overrides,
  };
}

describe.each(ENGINES)('the matches read model on %s', (engine) => {
  let db: Db;
  let drop: () => Promise<void>;
  const apply = (events: RecordedEvent[]) => db.transaction((tx) => matchesProjection.apply(tx, events));
  const ids = (rows: { data: { matchId: string } }[]) => rows.map((row) => row.data.matchId);

  beforeAll(async () => {
    ({ db, drop } = await createDb(engine));
    const at = (minute: number) => `2026-11-20T12:${String(minute).padStart(2, '0')}:00.000Z`;
    await apply([
      recorded(
        'AlertMatched',
        match('m1', { detectedAt: at(1), language: 'fr-FR', relevance: 'incidental' }),
      ),
      recorded(
        'AlertMatched',
        match('m2', { detectedAt: at(2), episode: { ...match('m2').episode, podcast_popularity: 0.96 } }),
      ),
      recorded('AlertMatched', match('m3', { detectedAt: at(3), roles: ['GUEST'] })),
      recorded('AlertMatched', match('m4', { detectedAt: at(4), alertId: 'alert-2' })),
      recorded('AlertMatched', match('m5', { detectedAt: at(5) })),
      recorded('AlertMatchSummarized', { matchId: 'm5', summary: 'It matters.', summarizedAt: at(6) }),
    ]);
    // A replayed match changes nothing.
    await apply([recorded('AlertMatched', match('m5', { detectedAt: at(9), mentionCount: 99 }))]);
  });
  afterAll(() => drop());

  it("lists an alert's matches newest first, with the summary and without windows or episode", async () => {
    const rows = await listAlertMatches(db, 'alert-1', { filters: {}, limit: 10 });
    expect(ids(rows)).toEqual(['m5', 'm3', 'm2', 'm1']);
    expect(rows[0]!.llmSummary).toBe('It matters.');
    expect(rows[0]!.data.mentionCount).toBe(1);
    expect(rows[0]!.data).not.toHaveProperty('windows');
    expect(rows[0]!.data).not.toHaveProperty('episode');
  });

  it('pages by (detected_at, id) without repeating or skipping', async () => {
    const first = await listAlertMatches(db, 'alert-1', { filters: {}, limit: 2 });
    const last = first.at(-1)!.data;
    const second = await listAlertMatches(db, 'alert-1', {
      filters: {},
      limit: 2,
      after: { detectedAt: last.detectedAt, id: last.matchId },
    });
    expect([...ids(first), ...ids(second)]).toEqual(['m5', 'm3', 'm2', 'm1']);
  });

  it('applies language, relevance, popularity and role filters', async () => {
    const list = (filters: Parameters<typeof listAlertMatches>[2]['filters']) =>
      listAlertMatches(db, 'alert-1', { filters, limit: 10 }).then(ids);
    expect(await list({ languages: ['FR'] })).toEqual(['m1']);
    expect(await list({ relevantOnly: true })).toEqual(['m5', 'm3', 'm2']);
    expect(await list({ minimumPopularity: 0.95 })).toEqual(['m2']);
    expect(await list({ roles: ['GUEST', 'PANELIST'] })).toEqual(['m3']);
  });

  it('empties on reset', async () => {
    await db.transaction((tx) => matchesProjection.reset(tx));
    expect(await listAlertMatches(db, 'alert-1', { filters: {}, limit: 10 })).toEqual([]);
  });
});
