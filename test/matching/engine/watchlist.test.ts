import { describe, expect, it } from 'vitest';
import { singleAlertWatch, Watchlist } from '../../../src/matching/engine/watchlist.ts';
import type { WatchedAlert } from '../../../src/matching/types.ts';

function alert(alertId: string, entityId: string): WatchedAlert {
  return {
    alertId,
    projectId: 'p',
    organizationId: 'o',
    kind: 'ENTITY_MENTION',
    entityId,
    entityType: 'PERSON',
    filters: {},
  };
}

const detectedIds = (
  watchlist: { detector: { findAll(text: string): { phrase: { entityIds: readonly string[] } }[] } },
  text: string,
) => watchlist.detector.findAll(text).flatMap((hit) => hit.phrase.entityIds);

describe('Watchlist', () => {
  it('detects an entity only while it has an active alert', () => {
    const watchlist = new Watchlist();
    watchlist.upsertEntity({ id: 'jh', name: 'Jensen Huang', aliases: ['Jensen'] });
    expect(detectedIds(watchlist, 'Jensen Huang')).toEqual([]);

    watchlist.putAlert(alert('a1', 'jh'));
    expect(detectedIds(watchlist, 'Jensen Huang')).toEqual(['jh', 'jh']);

    watchlist.removeAlert('a1');
    expect(detectedIds(watchlist, 'Jensen Huang')).toEqual([]);
    expect(watchlist.detector.entityCount).toBe(0);
  });

  it('follows renamed entities and alerts that arrive before their entity', () => {
    const watchlist = new Watchlist();
    watchlist.putAlert(alert('a1', 'x'));
    expect(detectedIds(watchlist, 'Twitter X')).toEqual([]);

    watchlist.upsertEntity({ id: 'x', name: 'Twitter' });
    expect(detectedIds(watchlist, 'Twitter X')).toEqual(['x']);

    watchlist.upsertEntity({ id: 'x', name: 'X Corp', aliases: ['Twitter'] });
    expect(watchlist.detector.phrasesOf('x')).toEqual(['x corp', 'twitter']);
  });

  it('builds a one-alert watch for a backfill', () => {
    const watch = singleAlertWatch(alert('a1', 'e1'), ['Société Générale']);
    expect(detectedIds(watch, 'societe generale')).toEqual(['e1']);
    expect([...watch.index.alertsFor('e1')]).toHaveLength(1);
  });
});
