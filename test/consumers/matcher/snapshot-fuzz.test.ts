// Review: random feeds of podcast, entity, alert (every alert event type) and episode events, the
// matcher restarted (from its snapshot) after every few events with small batches, against one
// replay of everything: the same matches, and the same snapshot once restarted at the head.
import { expect, it } from 'vitest';
import { realtimeMatcher } from '../../../consumers/matcher/realtime.ts';
import { readSnapshot } from '../../../consumers/matcher/snapshot.ts';
import { type AlertEvent, alertStream } from '../../../src/alerts/alert.ts';
import type { EventStore } from '../../../src/eventstore/port.ts';
import { resetCheckpoint } from '../../../src/subscriptions/checkpoints.ts';
import { readConsumerCheckpoint } from '../../../src/subscriptions/consumer.ts';
import { podcastEvent } from '../../catalog/support.ts';
import { entityEvent, untaggedEpisode } from '../../fixtures/events.ts';
import { pipelineFixture, runUntilCaughtUp } from '../../matching/support.ts';

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const untagged = (showId: string, line: string, id: string) =>
  untaggedEpisode(showId, ['Welcome.', line], id);

const NAMES = ['Chipzilla', 'Chipco', 'Acme', 'Globex'];
const LANGS = ['en', 'de', undefined];
type Status = 'active' | 'paused' | 'disabled';

for (const [engine, seed] of [
  ['postgres', 1],
  ['postgres', 2],
  ['postgres', 5],
  ['pglite', 3],
  ['pglite', 5],
] as const) {
  it(`${engine}, seed ${seed}: restarts from the snapshot match as one full replay`, {
    timeout: 120_000,
  }, async () => {
    const f = await pipelineFixture(engine);
    try {
      const r = rng(seed);
      const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
      const day = () => `2026-11-${String(10 + Math.floor(r() * 5)).padStart(2, '0')}T10:00:00Z`;
      await f.entity('e1', 'Chipzilla', [], 'COMPANY');
      await f.entity('e2', 'Acme', [], 'COMPANY');
      const alerts: string[] = [];
      const status = new Map<string, Status>();
      let n = 0;
      const at = () => `${day().slice(0, 10)}T11:00:00.000Z`;
      /** Any event of the alerts decider, as its commands would append it to the alert's stream. */
      const alertEvent = async (alertId: string) => {
        const now = status.get(alertId)!;
        const allowed = [
          'AlertUpdated',
          now === 'active' ? 'AlertPaused' : 'AlertResumed',
          ...(now === 'disabled' ? [] : ['AlertDisabledByRecipient']),
        ];
        const type = r() < 0.1 ? 'AlertDeleted' : pick(allowed);
        let event: AlertEvent;
        if (type === 'AlertUpdated')
          event = {
            type,
            data: {
              alertId,
              changes:
                r() < 0.5
                  ? { entity: { entityType: 'COMPANY', entityId: pick(['e1', 'e2']) } }
                  : { filters: r() < 0.5 ? { languages: [pick(['en', 'de'])] } : {} },
              disableTokens: [],
              updatedAt: at(),
            },
          };
        else if (type === 'AlertPaused') event = { type, data: { alertId, pausedAt: at() } };
        else if (type === 'AlertResumed') event = { type, data: { alertId, resumedAt: at() } };
        else if (type === 'AlertDisabledByRecipient')
          event = { type, data: { alertId, email: 'ops@example.com', disabledAt: at() } };
        else event = { type: 'AlertDeleted', data: { alertId, deletedAt: at() } };
        await f.store.append(alertStream(alertId), [event]);
        if (event.type === 'AlertDeleted') {
          alerts.splice(alerts.indexOf(alertId), 1);
          status.delete(alertId);
        } else if (event.type !== 'AlertUpdated')
          status.set(
            alertId,
            event.type === 'AlertPaused' ? 'paused' : event.type === 'AlertResumed' ? 'active' : 'disabled',
          );
        return event.type;
      };
      const types = new Set<string>();
      for (let step = 0; step < 100; step++) {
        const x = r();
        if (x < 0.15) {
          await f.ingest([
            entityEvent(
              {
                id: pick(['e1', 'e2']),
                name: pick(NAMES),
                aliases: r() < 0.5 ? [pick(NAMES)] : [],
                entity_type: 'COMPANY',
              },
              day(),
            ),
          ]);
        } else if (x < 0.3) {
          const language = pick(LANGS);
          await f.ingest([
            podcastEvent(
              { id: pick(['s1', 's2', 's3']), title: 'S', ...(language ? { language } : {}) },
              day(),
            ),
          ]);
        } else if (x < 0.55) {
          await f.ingest([
            untagged(pick(['s1', 's2', 's3']), `${pick(NAMES)} shipped a chip.`, `ep-${seed}-${n++}`),
          ]);
        } else if (x < 0.65) {
          const a = await f.createAlert(
            pick(['e1', 'e2']),
            r() < 0.5 ? { filters: { languages: [pick(['en', 'de'])] } } : {},
          );
          alerts.push(a.id);
          status.set(a.id, 'active');
          types.add('AlertCreated');
        } else if (x < 0.67 && alerts.length > 0) {
          const alertId = alerts.splice(Math.floor(r() * alerts.length), 1)[0]!;
          status.delete(alertId);
          await f.service.delete(f.caller, alertId);
          types.add('AlertDeleted');
        } else if (x < 0.88 && alerts.length > 0) {
          types.add(await alertEvent(pick(alerts)));
        } else {
          await runUntilCaughtUp(f.db, f.store, {
            ...realtimeMatcher(f.deps),
            batchSize: 1 + Math.floor(r() * 4),
          });
        }
      }
      await runUntilCaughtUp(f.db, f.store, realtimeMatcher(f.deps));
      const incremental = (await f.matches())
        .map((m) => `${m.id} ${m.data.alertId} ${m.data.sourceId} ${m.data.language}`)
        .sort();
      /** A restart at the checkpoint (it writes what it holds), then the snapshot's rows. */
      const heldAtHead = async () => {
        await realtimeMatcher(f.deps).start!(
          await readConsumerCheckpoint(f.db, { name: 'matcher' }),
          new AbortController().signal,
        );
        const snapshot = (await readSnapshot(f.db))!;
        return {
          entries: snapshot.entries.sort((a, b) => `${a.kind} ${a.key}`.localeCompare(`${b.kind} ${b.key}`)),
          alerts: snapshot.alerts.sort((a, b) => a.alertId.localeCompare(b.alertId)),
        };
      };
      const incrementalHeld = await heldAtHead();

      // One replay of everything: no snapshot, checkpoint at the start, appends recorded.
      await f.db.query('delete from matcher_snapshot_entries');
      await f.db.query('delete from matcher_snapshot_alerts');
      await f.db.query('delete from matcher_snapshot');
      await resetCheckpoint(f.db, 'consumer:matcher');
      const recorded: string[] = [];
      const recording: EventStore = {
        ...f.store,
        appendMany: async (appends) => {
          for (const a of appends)
            for (const e of a.events)
              if (e.type === 'AlertMatched') {
                const d = e.data as { alertId: string; sourceId: string; language?: string };
                recorded.push(`${e.id} ${d.alertId} ${d.sourceId} ${d.language}`);
              }
          return f.store.appendMany(appends);
        },
      };
      await runUntilCaughtUp(f.db, f.store, realtimeMatcher({ ...f.deps, store: recording }));
      expect(incremental.length).toBeGreaterThan(0);
      expect([...new Set(recorded)].sort()).toEqual(incremental);
      expect(await heldAtHead()).toEqual(incrementalHeld);
      expect(incrementalHeld.alerts.length).toBeGreaterThan(0);
      expect([...types].sort()).toEqual([
        'AlertCreated',
        'AlertDeleted',
        'AlertDisabledByRecipient',
        'AlertPaused',
        'AlertResumed',
        'AlertUpdated',
      ]);
    } finally {
      await f.close();
    }
  });
}
