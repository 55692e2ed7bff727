import type { AlertNotice, MentionLine, NoticeMatch } from '../email/notice.ts';
import type { DeliveryCreatedData } from './delivery.ts';
import type { MatchedData } from './matched.ts';

/** The transcript lines that mention the entity, in transcript order. */
export function mentionLines(match: MatchedData): MentionLine[] {
  return (match.windows ?? []).flatMap((window) =>
    (window.lines ?? [])
      .filter((line) => line.is_mention)
      .map((line) => ({
        text: line.text,
        ...(line.speaker !== undefined && { speaker: line.speaker }),
        startSeconds: line.start_seconds,
      })),
  );
}

export const listenUrl = (match: MatchedData) =>
  match.episode?.apple_podcasts_url ?? match.episode?.audio_url;

export function noticeMatch(match: MatchedData): NoticeMatch {
  const episode = match.episode ?? {};
  const artwork = episode.image_url ?? episode.podcast_image_url;
  const url = listenUrl(match);
  const published = episode.published_at ? new Date(episode.published_at) : undefined;
  return {
    matchId: match.matchId,
    episodeTitle: episode.title ?? 'Untitled episode',
    podcastTitle: episode.podcast_title ?? 'Unknown podcast',
    ...(artwork !== undefined && { artworkUrl: artwork }),
    ...(url !== undefined && { episodeUrl: url }),
    ...(published && !Number.isNaN(published.getTime()) && { publishedAt: published }),
    mentionCount: match.mentionCount,
    lines: mentionLines(match),
  };
}

/** The channel-neutral notice the email and chat renderers take (docs/channels.md). */
export function noticeOf(created: DeliveryCreatedData, matches: readonly MatchedData[]): AlertNotice {
  const notice: AlertNotice = {
    kind: created.type === 'alert.digest' ? 'digest' : 'realtime',
    deliveryId: created.deliveryId,
    alert: { id: created.alert.id, title: created.alert.title },
    matchCount: matches.length,
    matches: matches.map(noticeMatch),
  };
  if (created.cadence !== 'REALTIME') notice.cadence = created.cadence;
  if (created.window)
    notice.window = { start: new Date(created.window.start), end: new Date(created.window.end) };
  return notice;
}
