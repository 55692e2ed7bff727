import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { findEntity } from '../../projections/entities/queries.ts';
import { episodesPublishedBetween } from '../../projections/episodes/queries.ts';
import { toAlertEvent } from '../../src/alerts/alert.ts';
import { episodeLanguage } from '../../src/catalog/episode-language.ts';
import type { Db } from '../../src/db/db.ts';
import { comparePositions, type EventStore, type RecordedEvent } from '../../src/eventstore/port.ts';
import { episodeStream } from '../../src/ingestion/events.ts';
import { MatchAppender } from '../../src/matching/append-matches.ts';
import { matchEpisodeBlock } from '../../src/matching/engine/episode-block.ts';
import { watchedAlertOf } from '../../src/matching/engine/live-watchlist.ts';
import { matchEpisode } from '../../src/matching/engine/match-episode.ts';
import { singleAlertWatch } from '../../src/matching/engine/watchlist.ts';
import { causedBy, withCorrelation } from '../../src/observability/correlation.ts';
import { readCheckpoint } from '../../src/subscriptions/checkpoints.ts';
import type { Consumer } from '../../src/subscriptions/consumer.ts';

/** Backfill window (docs/matching-pipeline.md, Backfill): episodes published in the 7 days before creation. */
export const BACKFILL_DAYS = 7;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface BackfillDeps {
  db: Db;
  store: EventStore;
  log: Logger;
  now(): Date;
  /** How often to look whether the episodes read model has caught up, in ms. Default 250. */
  pollMs?: number;
}

/**
 * The creation-time backfill: for each AlertCreated, once the episodes read model reflects every
 * episode appended before it, matches the episodes published in [createdAt − 7 days, createdAt]
 * and appends them with isBackfilled: true (never notified). Only episodes whose first version was
 * appended before the alert are the backfill's; later ones are the realtime matcher's.
 */
export function backfill(deps: BackfillDeps): Consumer {
  const log = deps.log.child({ consumer: 'backfill' });
  return {
    name: 'backfill',
    eventTypes: ['AlertCreated'],
    batchSize: 10,
    async handle(events, signal) {
      for (const event of events) await backfillAlert(deps, event, signal, log);
    },
  };
}

async function backfillAlert(deps: BackfillDeps, event: RecordedEvent, signal: AbortSignal, log: Logger) {
  const created = toAlertEvent(event);
  if (created.type !== 'AlertCreated') return;
  const data = created.data;
  const alertLog = withCorrelation(log, event.metadata, { alertId: data.alertId });
  await episodesReachedPosition(deps, event.position, signal, alertLog);

  const entity = await findEntity(deps.db, data.entity.entityId);
  const names = entity ? [entity.name, ...entity.aliases] : [];
  const alert = watchedAlertOf({ ...data, id: data.alertId });
  const watch = singleAlertWatch(alert, names);
  const createdAt = new Date(data.createdAt);
  const from = new Date(createdAt.getTime() - BACKFILL_DAYS * DAY_MS);
  const to = new Date(createdAt.getTime() + 1);

  const appender = new MatchAppender(deps.store, 4);
  let swept = 0;
  let skipped = 0;
  for await (const stored of episodesPublishedBetween(deps.db, from, to)) {
    signal.throwIfAborted();
    swept++;
    const { showLanguage } = stored;
    const [match] = matchEpisode(stored.episode, {
      ...watch,
      now: deps.now(),
      isBackfilled: true,
      showLanguage,
    });
    if (!match) continue;
    const [first] = await deps.store.readStream(episodeStream(stored.episode.episode.id), { limit: 1 });
    if (!first || comparePositions(first.position, event.position) > 0) {
      skipped++;
      continue;
    }
    const language = episodeLanguage(stored.episode, showLanguage);
    appender.add({
      data: {
        ...match,
        organizationId: data.organizationId,
        episode: matchEpisodeBlock(stored.episode),
        ...(language ? { language } : {}),
      },
      context: causedBy(event),
    });
  }
  await appender.flush();
  alertLog.info(
    { swept, appended: appender.appended, duplicates: appender.duplicates, skipped },
    'backfill done',
  );
}

/**
 * Waits until the episodes read model holds every episode appended before `position`: its
 * checkpoint has passed it, or no episode lies between its checkpoint and it (the checkpoint
 * only moves when episodes arrive).
 */
async function episodesReachedPosition(
  deps: BackfillDeps,
  position: string,
  signal: AbortSignal,
  log: Logger,
) {
  const startedAt = Date.now();
  let warned = false;
  for (;;) {
    const checkpoint = await readCheckpoint(deps.db, 'episodes');
    if (comparePositions(checkpoint, position) >= 0) return;
    const { events } = await deps.store.readAll({
      after: checkpoint,
      eventTypes: ['EpisodeTranscribed'],
      limit: 1,
    });
    if (events.length === 0 || comparePositions(events[0]!.position, position) > 0) return;
    if (!warned && Date.now() - startedAt > 30_000) {
      warned = true;
      log.warn('backfill waits for the episodes read model (is a projector running?)');
    }
    await sleep(deps.pollMs ?? 250, undefined, { signal });
  }
}
