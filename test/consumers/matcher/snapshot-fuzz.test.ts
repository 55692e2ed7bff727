// Review: random feeds of podcast, entity, alert and episode events, the matcher restarted (from its
// snapshot) after every few events with small batches, against one replay of everything.
import { expect, it } from 'vitest';
import { realtimeMatcher } from '../../../consumers/matcher/realtime.ts';
import type { EventStore } from '../../../src/eventstore/port.ts';
import { resetCheckpoint } from '../../../src/subscriptions/checkpoints.ts';
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
      let n = 0;
      for (let step = 0; step < 60; step++) {
        const x = r();
        if (x < 0.2) {
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
        } else if (x < 0.4) {
          const language = pick(LANGS);
          await f.ingest([
            podcastEvent(
              { id: pick(['s1', 's2', 's3']), title: 'S', ...(language ? { language } : {}) },
              day(),
            ),
          ]);
        } else if (x < 0.75) {
          await f.ingest([
            untagged(pick(['s1', 's2', 's3']), `${pick(NAMES)} shipped a chip.`, `ep-${seed}-${n++}`),
          ]);
        } else if (x < 0.82) {
          const a = await f.createAlert(
            pick(['e1', 'e2']),
            r() < 0.5 ? { filters: { languages: [pick(['en', 'de'])] } } : {},
          );
          alerts.push(a.id);
        } else if (x < 0.85 && alerts.length > 0) {
          await f.service.delete(f.caller, alerts.splice(Math.floor(r() * alerts.length), 1)[0]!);
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

      // One replay of everything: no snapshot, checkpoint at the start, appends recorded.
      await f.db.query('delete from matcher_snapshot_entries');
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
    } finally {
      await f.close();
    }
  });
}
