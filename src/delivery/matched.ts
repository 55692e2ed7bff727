import type { EventStore } from '../eventstore/port.ts';
import {
  ALERT_MATCH_SUMMARIZED,
  ALERT_MATCHED,
  type AlertMatchedEventData,
  type AlertMatchSummarizedData,
  matchStream,
} from '../matching/streams.ts';

/** What delivery reads from an AlertMatched event (the matching pipeline's data, as appended). */
export type MatchedData = AlertMatchedEventData;
export type MatchSummarizedData = AlertMatchSummarizedData;
export { ALERT_MATCH_SUMMARIZED, ALERT_MATCHED };

/**
 * The AlertMatched data of each match, read from the match streams (immutable, so anything
 * rebuilt from it later comes out the same). Missing matches are absent from the map.
 */
export async function readMatches(
  store: EventStore,
  matchIds: readonly string[],
  concurrency = 16,
): Promise<Map<string, MatchedData>> {
  const found = new Map<string, MatchedData>();
  let next = 0;
  const worker = async () => {
    while (next < matchIds.length) {
      const id = matchIds[next++]!;
      const events = await store.readStream(matchStream(id));
      const matched = events.find((event) => event.type === ALERT_MATCHED);
      if (matched) found.set(id, matched.data as MatchedData);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, matchIds.length) }, worker));
  return found;
}
