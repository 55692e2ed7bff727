import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Logger } from 'pino';
import { episodeLanguage } from '../../src/catalog/episode-language.ts';
import type { Db } from '../../src/db/db.ts';
import { comparePositions, type EventStore, type RecordedEvent, START } from '../../src/eventstore/port.ts';
import type { EpisodeTranscribed } from '../../src/ingestion/events.ts';
import { MatchAppender } from '../../src/matching/append-matches.ts';
import { matchEpisodeBlock } from '../../src/matching/engine/episode-block.ts';
import { LiveWatchlist, WATCHLIST_EVENT_TYPES } from '../../src/matching/engine/live-watchlist.ts';
import { matchEpisode } from '../../src/matching/engine/match-episode.ts';
import { SHOW_LANGUAGE_EVENT_TYPES, ShowLanguages } from '../../src/matching/engine/show-languages.ts';
import type { AlertMatchedData } from '../../src/matching/types.ts';
import { causedBy, withCorrelation } from '../../src/observability/correlation.ts';
import { metrics } from '../../src/observability/metrics.ts';
import type { Consumer } from '../../src/subscriptions/consumer.ts';

/** What the matcher holds in memory follows these events; the rest of its feed is episodes. */
const STATE_EVENT_TYPES: readonly string[] = [...WATCHLIST_EVENT_TYPES, ...SHOW_LANGUAGE_EVENT_TYPES];

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
 * languages are rebuilt by replaying those events up to the checkpoint. Matches are appended as
 * AlertMatched (id = match id) before the checkpoint moves: a crash in between repeats them as
 * no-ops.
 *
 * An episode sent again after an alert was created, whose first version came before it, belongs
 * to that alert's backfill (see docs/matching-pipeline.md), so it is not matched here for it.
 */
export function realtimeMatcher(deps: RealtimeMatcherDeps, stats?: MatcherStats): Consumer {
  let live = new LiveWatchlist();
  let shows = new ShowLanguages();
  const apply = (event: RecordedEvent) => {
    live.apply(event);
    shows.apply(event);
  };
  const log = deps.log.child({ consumer: 'matcher' });
  return {
    name: 'matcher',
    eventTypes: ['EpisodeTranscribed', ...STATE_EVENT_TYPES],
    batchSize: deps.batchSize ?? 50,

    async start(checkpoint, signal) {
      live = new LiveWatchlist();
      shows = new ShowLanguages();
      const started = performance.now();
      let after = START;
      let replayed = 0;
      while (comparePositions(after, checkpoint) < 0) {
        signal.throwIfAborted();
        const page = await deps.store.readAll({ after, eventTypes: STATE_EVENT_TYPES, limit: 2000 });
        for (const event of page.events) {
          if (comparePositions(event.position, checkpoint) > 0) break;
          apply(event);
          replayed++;
        }
        if (page.lastPosition === after) break;
        after = page.lastPosition;
      }
      log.info(
        { replayed, alerts: live.index.alertCount, ms: Math.round(performance.now() - started) },
        'watchlist rebuilt',
      );
    },

    async handle(events) {
      const appender = new MatchAppender(deps.store, deps.appendConcurrency ?? 16);
      let episodes = 0;
      for (const event of events) {
        if (event.type !== 'EpisodeTranscribed') {
          apply(event);
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
