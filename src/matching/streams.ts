import type { NewEvent } from '../eventstore/port.ts';
import { uuidFromName } from '../ids.ts';
import type { AlertMatchedData } from './types.ts';

/** One match is one stream: its AlertMatched, then its AlertMatchSummarized. */
export const matchStream = (matchId: string) => `match-${matchId}`;

export const ALERT_MATCHED = 'AlertMatched';
export const ALERT_MATCH_SUMMARIZED = 'AlertMatchSummarized';

/**
 * The match episode block (docs/matching.md, Match fields) as the API shows it; fields the
 * producer did not send are absent.
 */
export interface MatchEpisodeBlock {
  podcast_id: string;
  podcast_title: string;
  title: string;
  slug?: string;
  podcast_slug?: string;
  audio_url?: string;
  apple_podcasts_url?: string;
  image_url?: string;
  podcast_image_url?: string;
  duration_seconds: number;
  explicit?: boolean;
  published_at: string;
  podcast_bias?: string;
  podcast_popularity?: number;
  podcast_popularity_badge?: string;
}

/**
 * The data of an AlertMatched event. Immutable once appended: everything rebuilt from it later
 * (webhook bodies, the single-match read) depends on this data alone.
 */
export interface AlertMatchedEventData extends AlertMatchedData {
  organizationId: string;
  episode: MatchEpisodeBlock;
  /** The episode's language tag as sent (episode, else transcript, else podcast); absent when unknown. */
  language?: string;
}

export interface AlertMatchSummarizedData {
  matchId: string;
  summary: string;
  summarizedAt: string;
}

/** The event id is the match id: appending the same match again is a no-op. */
export const alertMatchedEvent = (
  data: AlertMatchedEventData,
): NewEvent<typeof ALERT_MATCHED, AlertMatchedEventData> => ({
  id: data.matchId,
  type: ALERT_MATCHED,
  data,
});

/** One summary per match: a second summarizer run appends nothing. */
export const alertMatchSummarizedEvent = (
  data: AlertMatchSummarizedData,
): NewEvent<typeof ALERT_MATCH_SUMMARIZED, AlertMatchSummarizedData> => ({
  id: uuidFromName(`earshot:match-summary:${data.matchId}`),
  type: ALERT_MATCH_SUMMARIZED,
  data,
});
