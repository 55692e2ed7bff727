import { MATCH_DATA } from '../../projections/deliveries/queries.ts';
import type { Queryable } from '../db/db.ts';
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

/**
 * The AlertMatched data of many matches, from the deliverer's copies (the exact event data,
 * committed by the fan-out with the queue rows): `whole` with their windows, `mentions` (the rest)
 * with their mention lines only, as email and chat quote them (docs/delivery.md, The queue and the
 * workers). Any match without a copy is read whole from its stream.
 */
export async function loadMatches(
  deps: { db: Queryable; store: EventStore },
  wanted: { whole: readonly string[]; mentions?: readonly string[] },
): Promise<Map<string, MatchedData>> {
  const whole = [...new Set(wanted.whole)];
  const mentions = [...new Set(wanted.mentions ?? [])].filter((id) => !whole.includes(id));
  const found = new Map<string, MatchedData>();
  for (const [ids, read] of [
    [whole, MATCH_DATA.all],
    [mentions, MATCH_DATA.mentions],
  ] as const) {
    if (ids.length === 0) continue;
    const { rows } = await deps.db.query<{ match_id: string; data: MatchedData }>(
      `select c.match_id, ${read} as data from delivery_match_copies c where c.match_id = any($1::text[])`,
      [ids],
    );
    for (const row of rows) found.set(row.match_id, row.data);
  }
  const missing = [...whole, ...mentions].filter((id) => !found.has(id));
  if (missing.length > 0) {
    for (const [id, data] of await readMatches(deps.store, missing)) found.set(id, data);
  }
  return found;
}
