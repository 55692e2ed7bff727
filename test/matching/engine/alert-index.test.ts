import { describe, expect, it } from 'vitest';
import { AlertIndex } from '../../../src/matching/engine/alert-index.ts';
import type { WatchedAlert } from '../../../src/matching/types.ts';

function alert(alertId: string, entityId: string): WatchedAlert {
  return {
    alertId,
    projectId: 'p',
    organizationId: 'o',
    kind: 'ENTITY_MENTION',
    entityId,
    entityType: 'COMPANY',
    filters: {},
  };
}

describe('AlertIndex', () => {
  it('finds the alerts of an entity', () => {
    const index = new AlertIndex();
    index.put(alert('a1', 'e1'));
    index.put(alert('a2', 'e1'));
    index.put(alert('a3', 'e2'));
    expect([...index.alertsFor('e1')].map((a) => a.alertId)).toEqual(['a1', 'a2']);
    expect([...index.alertsFor('e3')]).toEqual([]);
    expect(index.alertCount).toBe(3);
  });

  it('reports an entity as watched with its first alert and unwatched after its last', () => {
    const index = new AlertIndex();
    expect(index.put(alert('a1', 'e1'))).toEqual({ watched: ['e1'], unwatched: [] });
    expect(index.put(alert('a2', 'e1'))).toEqual({ watched: [], unwatched: [] });
    expect(index.remove('a1')).toEqual({ watched: [], unwatched: [] });
    expect(index.remove('a2')).toEqual({ watched: [], unwatched: ['e1'] });
    expect(index.isWatched('e1')).toBe(false);
    expect(index.remove('a2')).toEqual({ watched: [], unwatched: [] });
  });

  it('moves an updated alert to its new entity', () => {
    const index = new AlertIndex();
    index.put(alert('a1', 'e1'));
    expect(index.put(alert('a1', 'e2'))).toEqual({ watched: ['e2'], unwatched: ['e1'] });
    expect([...index.alertsFor('e1')]).toEqual([]);
    expect(index.get('a1')?.entityId).toBe('e2');
  });

  it('replaces an updated alert in place without unwatching its entity', () => {
    const index = new AlertIndex();
    index.put(alert('a1', 'e1'));
    const updated = { ...alert('a1', 'e1'), filters: { languages: ['en'] } };
    expect(index.put(updated)).toEqual({ watched: [], unwatched: [] });
    expect([...index.alertsFor('e1')]).toEqual([updated]);
  });
});
