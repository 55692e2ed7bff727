import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Logger } from 'pino';
import { ALERT_EVENT_TYPES, type AlertEvent } from '../../src/alerts/alert.ts';
import { episodeLanguage } from '../../src/catalog/episode-language.ts';
import type { Db } from '../../src/db/db.ts';
import { comparePositions, type EventStore, type RecordedEvent, START } from '../../src/eventstore/port.ts';
import type { EntityUpserted, EpisodeTranscribed, PodcastUpserted } from '../../src/ingestion/events.ts';
import { MatchAppender } from '../../src/matching/append-matches.ts';
import { matchEpisodeBlock } from '../../src/matching/engine/episode-block.ts';
import { LiveWatchlist, WATCHLIST_EVENT_TYPES } from '../../src/matching/engine/live-watchlist.ts';
import { matchEpisode } from '../../src/matching/engine/match-episode.ts';
import { SHOW_LANGUAGE_EVENT_TYPES, ShowLanguages } from '../../src/matching/engine/show-languages.ts';
import type { AlertMatchedData } from '../../src/matching/types.ts';
import { causedBy, withCorrelation } from '../../src/observability/correlation.ts';
import { metrics } from '../../src/observability/metrics.ts';
import type { Consumer } from '../../src/subscriptions/consumer.ts';
import {
  readSnapshot,
  readSnapshotPosition,
  type SnapshotAlert,
  type SnapshotEntry,
  writeSnapshot,
} from './snapshot.ts';

/** What the matcher holds in memory follows these events; the rest of its feed is episodes. */
const STATE_EVENT_TYPES: readonly string[] = [...WATCHLIST_EVENT_TYPES, ...SHOW_LANGUAGE_EVENT_TYPES];
/** Those of them a catalog sends again on every crawl: kept in the snapshot, replayed after it. */
const CRAWLED_EVENT_TYPES: readonly string[] = ['EntityUpserted', ...SHOW_LANGUAGE_EVENT_TYPES];
const ALERT_TYPES: ReadonlySet<string> = new Set(ALERT_EVENT_TYPES);

export interface RealtimeMatcherDeps {
  db: Db;
  store: EventStore;
  log: Logger;
  now(): Date;
  /** Episodes (and alert/entity events) per batch. Default 50. */
  batchSize?: number;
  /** AlertMatched appends in flight. Default 16. */
  appendConcurrency?: number;
}

/** What one run of the matcher did, for logs and the benchmark. */
export interface MatcherStats {
  episodes: number;
  appended: number;
  duplicates: number;
}

/**
 * The realtime matcher: follows EpisodeTranscribed together with the alert, entity and podcast
 * events in one ordered feed, so each episode is matched against exactly the alerts, names and
 * show languages that existed when it was appended. On (re)start the in-memory watchlist and show
 * languages are rebuilt as of the checkpoint from the matcher's snapshot (the shows' languages, the
 * entities' names and the alerts it follows) plus the podcast, entity and alert events stored after
 * it (docs/matching-pipeline.md, "Restart"). Matches are appended as
 * AlertMatched (id = match id) before the checkpoint moves: a crash in between repeats them as
 * no-ops.
 *
 * An episode sent again after an alert was created, whose first version came before it, belongs
 * to that alert's backfill (see docs/matching-pipeline.md), so it is not matched here for it.
 */
export function realtimeMatcher(deps: RealtimeMatcherDeps, stats?: MatcherStats): Consumer {
  let live = new LiveWatchlist();
  let shows = new ShowLanguages();
  // The position the state in memory is at, and the snapshot's (docs/matching-pipeline.md, "Restart").
  let appliedThrough = START;
  let snapshotAt: string | undefined;
  let snapshotReplace = false;
  const dirtyShows = new Set<string>();
  const dirtyEntities = new Set<string>();
  const dirtyAlerts = new Set<string>();
  const apply = (event: RecordedEvent) => {
    live.apply(event);
    shows.apply(event);
    if (event.type === 'PodcastUpserted') dirtyShows.add((event.data as PodcastUpserted).podcast.id);
    else if (event.type === 'EntityUpserted') dirtyEntities.add((event.data as EntityUpserted).entity.id);
    else if (ALERT_TYPES.has(event.type)) dirtyAlerts.add((event.data as AlertEvent['data']).alertId);
  };
  const log = deps.log.child({ consumer: 'matcher' });

  /** Replays the events of `eventTypes` in (after, checkpoint]; returns how many. */
  const replay = async (
    after: string,
    checkpoint: string,
    eventTypes: readonly string[],
    signal: AbortSignal,
  ) => {
    let replayed = 0;
    while (comparePositions(after, checkpoint) < 0) {
      signal.throwIfAborted();
      const page = await deps.store.readAll({ after, eventTypes, limit: 2000 });
      for (const event of page.events) {
        if (comparePositions(event.position, checkpoint) > 0) return replayed;
        apply(event);
        replayed++;
      }
      if (page.lastPosition === after) break;
      after = page.lastPosition;
    }
    return replayed;
  };

  /**
   * Writes the shows, entities and alerts changed since the snapshot (all of them when it is
   * replaced) as of `appliedThrough`, which the checkpoint has reached. Another writer having moved
   * the snapshot, the next write is whole.
   */
  const saveSnapshot = async () => {
    if (!snapshotReplace && dirtyShows.size === 0 && dirtyEntities.size === 0 && dirtyAlerts.size === 0)
      return;
    const entries: SnapshotEntry[] = [];
    const showIds = snapshotReplace ? [...shows.entries()].map(([id]) => id) : dirtyShows;
    for (const id of showIds) {
      const held = shows.entry(id);
      if (held) entries.push({ kind: 'show', key: id, at: held.at, value: { language: held.language } });
    }
    const entityIds = snapshotReplace ? [...live.entities()].map(([id]) => id) : dirtyEntities;
    for (const id of entityIds) {
      const held = live.entity(id);
      if (held) entries.push({ kind: 'entity', key: id, at: held.at, value: { names: held.names } });
    }
    const alerts: SnapshotAlert[] = [];
    if (snapshotReplace) for (const [alertId, held] of live.alertEntries()) alerts.push({ alertId, ...held });
    else
      for (const alertId of dirtyAlerts) {
        const held = live.alert(alertId);
        if (held) alerts.push({ alertId, ...held });
      }
    const written = await writeSnapshot(deps.db, {
      from: snapshotAt,
      position: appliedThrough,
      replace: snapshotReplace,
      entries,
      alerts,
    });
    if (!written) {
      // Another holder moved it (a retry-parked run, a standby taking over). Its snapshot and this
      // state are each as of a position the checkpoint has reached: this one is written whole at
      // the next batch, compare-and-set on the position now stored (docs/matching-pipeline.md).
      snapshotAt = await readSnapshotPosition(deps.db);
      snapshotReplace = true;
      log.warn('matcher snapshot moved by another writer: written whole at the next batch');
      return;
    }
    snapshotAt = appliedThrough;
    snapshotReplace = false;
    dirtyShows.clear();
    dirtyEntities.clear();
    dirtyAlerts.clear();
  };

  return {
    name: 'matcher',
    eventTypes: ['EpisodeTranscribed', ...STATE_EVENT_TYPES],
    batchSize: deps.batchSize ?? 50,

    async start(checkpoint, signal) {
      live = new LiveWatchlist();
      shows = new ShowLanguages();
      dirtyShows.clear();
      dirtyEntities.clear();
      dirtyAlerts.clear();
      const started = performance.now();
      // A snapshot past the checkpoint (a reset or rebuild moved the checkpoint back) holds events
      // the checkpoint has not reached: everything is replayed and the snapshot replaced. So are
      // the alerts of a snapshot that has none written with it (alertsPosition undefined).
      const snapshot = await readSnapshot(deps.db);
      snapshotAt = snapshot?.position;
      const usable = snapshot !== undefined && comparePositions(snapshot.position, checkpoint) <= 0;
      const alertsAt =
        snapshot?.alertsPosition !== undefined && comparePositions(snapshot.alertsPosition, checkpoint) <= 0
          ? snapshot.alertsPosition
          : undefined;
      snapshotReplace = !usable || alertsAt === undefined;
      if (usable) {
        for (const entry of snapshot.entries) {
          if (entry.kind === 'show')
            shows.restore(entry.key, {
              language: (entry.value as { language: string }).language,
              at: entry.at,
            });
          else
            live.restoreEntity(entry.key, {
              names: (entry.value as { names: string[] }).names,
              at: entry.at,
            });
        }
      }
      if (alertsAt !== undefined) for (const held of snapshot!.alerts) live.restoreAlert(held.alertId, held);
      // Shows, entities and alerts are independent, and the watchlist is the same whatever the
      // order of its entity and alert updates: each kind is replayed after the snapshot's position
      // for it (docs/matching-pipeline.md, "Restart").
      const alerts = await replay(alertsAt ?? START, checkpoint, ALERT_EVENT_TYPES, signal);
      const tail = await replay(usable ? snapshot.position : START, checkpoint, CRAWLED_EVENT_TYPES, signal);
      appliedThrough = checkpoint;
      await saveSnapshot();
      log.info(
        {
          replayed: alerts + tail,
          fromSnapshot:
            (usable ? snapshot.entries.length : 0) + (alertsAt !== undefined ? snapshot!.alerts.length : 0),
          alerts: live.index.alertCount,
          ms: Math.round(performance.now() - started),
        },
        'watchlist rebuilt',
      );
    },

    async handle(events) {
      // The state as of the previous batch, which the checkpoint has reached.
      await saveSnapshot();
      const appender = new MatchAppender(deps.store, deps.appendConcurrency ?? 16);
      let episodes = 0;
      for (const event of events) {
        if (event.type !== 'EpisodeTranscribed') {
          // Already in memory: a parked event replayed behind the checkpoint (retryParked).
          if (comparePositions(event.position, appliedThrough) > 0) apply(event);
          continue;
        }
        episodes++;
        // Matching is CPU work: let HTTP requests sharing this process in between episodes.
        await yieldToEventLoop();
        const episode = event.data as EpisodeTranscribed;
        const showLanguage = shows.of(episode.podcast.id);
        let matches = matchEpisode(episode, {
          index: live.index,
          detector: live.detector,
          now: deps.now(),
          showLanguage,
        });
        if (matches.length > 0 && event.revision > 0)
          matches = await markBackfillOwned(deps.store, live, event, matches);
        if (matches.length === 0) continue;
        const block = matchEpisodeBlock(episode);
        const language = episodeLanguage(episode, showLanguage);
        const context = causedBy(event);
        for (const match of matches) {
          const alert = live.index.get(match.alertId)!;
          appender.add({
            data: {
              ...match,
              organizationId: alert.organizationId,
              episode: block,
              ...(language ? { language } : {}),
            },
            context,
          });
        }
        withCorrelation(log, event.metadata, { episodeId: episode.episode.id }).debug(
          { matches: matches.length },
          'episode matched',
        );
      }
      await appender.flush();
      const last = events.at(-1);
      if (last && comparePositions(last.position, appliedThrough) > 0) appliedThrough = last.position;
      const lastEpisode = events.findLast((event) => event.type === 'EpisodeTranscribed');
      if (lastEpisode) metrics.matcherLagSeconds.set((Date.now() - lastEpisode.recordedAt.getTime()) / 1000);
      if (stats) {
        stats.episodes += episodes;
        stats.appended += appender.appended;
        stats.duplicates += appender.duplicates;
      }
    },
  };
}

/**
 * For an episode sent again: the matches of alerts created after the episode's first version
 * belong to their backfill, so they are written as backfilled (never notified), with the same id
 * the backfill would use, so it is written once whichever writes first; a re-sent version that
 * only now mentions the entity still gets its match whether the backfill ran before or after. (For
 * an episode whose event names no language, the two may judge a language filter by different
 * show languages: docs/matching-pipeline.md, "A show's language".)
 */
async function markBackfillOwned(
  store: EventStore,
  live: LiveWatchlist,
  event: RecordedEvent,
  matches: AlertMatchedData[],
): Promise<AlertMatchedData[]> {
  const [first] = await store.readStream(event.streamId, { limit: 1 });
  const firstPosition = first?.position ?? event.position;
  return matches.map((match) => {
    const created = live.createdPositionOf(match.alertId);
    const ownedByBackfill = created !== undefined && comparePositions(created, firstPosition) > 0;
    return ownedByBackfill ? { ...match, isBackfilled: true } : match;
  });
}
