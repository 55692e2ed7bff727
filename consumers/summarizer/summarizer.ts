import type { Logger } from 'pino';
import { findEpisode } from '../../projections/episodes/queries.ts';
import type { Db } from '../../src/db/db.ts';
import type { EventStore, RecordedEvent } from '../../src/eventstore/port.ts';
import {
  ALERT_MATCHED,
  type AlertMatchedEventData,
  alertMatchSummarizedEvent,
  matchStream,
} from '../../src/matching/streams.ts';
import type { SummaryProvider } from '../../src/matching/summary.ts';
import { causedBy, withCorrelation } from '../../src/observability/correlation.ts';
import type { Consumer } from '../../src/subscriptions/consumer.ts';

export interface SummarizerDeps {
  db: Db;
  store: EventStore;
  log: Logger;
  now(): Date;
  provider: SummaryProvider;
  /** Matches summarized at once. Default 4. */
  concurrency?: number;
}

/**
 * Follows AlertMatched and appends one AlertMatchSummarized per match (its id derived from the
 * match id, so a repeated batch appends nothing new). A provider failure leaves that match
 * without a summary rather than holding back every later one.
 */
export function summarizer(deps: SummarizerDeps): Consumer {
  const log = deps.log.child({ consumer: 'summarizer', provider: deps.provider.name });
  return {
    name: 'summarizer',
    eventTypes: [ALERT_MATCHED],
    batchSize: 50,
    async handle(events) {
      let next = 0;
      const work = async () => {
        while (next < events.length) await summarizeOne(deps, events[next++]!, log);
      };
      await Promise.all(Array.from({ length: Math.min(deps.concurrency ?? 4, events.length) }, work));
    },
  };
}

async function summarizeOne(deps: SummarizerDeps, event: RecordedEvent, log: Logger) {
  const match = event.data as AlertMatchedEventData;
  const matchLog = withCorrelation(log, event.metadata, { matchId: match.matchId });
  const stored = await findEpisode(deps.db, match.sourceId);
  let summary: string | null;
  try {
    summary = await deps.provider.summarize(match, stored?.episode ?? null);
  } catch (error) {
    matchLog.warn({ err: error }, 'summary provider failed; the match stays without a summary');
    return;
  }
  if (!summary) return;
  await deps.store.append(
    matchStream(match.matchId),
    [alertMatchSummarizedEvent({ matchId: match.matchId, summary, summarizedAt: deps.now().toISOString() })],
    { expectedRevision: 'any', ...causedBy(event) },
  );
}
