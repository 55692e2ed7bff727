/**
 * What an alert notification says, independent of the channel: the delivery layer builds one
 * from the stored events and hands it to the email and chat renderers.
 */

export interface MentionLine {
  text: string;
  speaker?: string;
  /** Offset into the episode, in seconds. */
  startSeconds?: number;
}

export interface NoticeMatch {
  matchId: string;
  episodeTitle: string;
  podcastTitle: string;
  /** Episode or podcast artwork (image_url, else podcast_image_url). */
  artworkUrl?: string;
  /** Where to listen (e.g. the episode's directory page or audio_url). */
  episodeUrl?: string;
  publishedAt?: Date;
  mentionCount: number;
  /** The transcript lines that mention the entity, best first. */
  lines: MentionLine[];
}

export type NoticeKind = 'realtime' | 'digest' | 'test';

export interface AlertNotice {
  kind: NoticeKind;
  deliveryId: string;
  alert: { id: string; title: string };
  /** Digests: DAILY or WEEKLY, with the UTC window [start, end). */
  cadence?: 'DAILY' | 'WEEKLY';
  window?: { start: Date; end: Date };
  /** The true number of matches in the delivery; `matches` may hold fewer. */
  matchCount: number;
  matches: NoticeMatch[];
}

/** `{PUBLIC_BASE_URL}/alerts/deliveries/{id}`: the shareable landing page of a delivery. */
export function landingUrl(publicBaseUrl: string, deliveryId: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/alerts/deliveries/${encodeURIComponent(deliveryId)}`;
}

/** `{PUBLIC_BASE_URL}/v1/alerts/disable?token=…`: the one-click disable link of an email. */
export function disableUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/v1/alerts/disable?token=${encodeURIComponent(token)}`;
}

/** 75 → "1:15", 3725 → "1:02:05". */
export function formatOffset(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds));
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = String(whole % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

const DAY = 86_400_000;

/** "new mention", "daily digest for 2026-03-01", "weekly digest for 2026-02-23 to 2026-03-01". */
export function describeNotice(notice: AlertNotice): string {
  if (notice.kind === 'test') return 'test notification';
  if (notice.kind === 'realtime') return 'new match';
  const cadence = notice.cadence === 'WEEKLY' ? 'weekly' : 'daily';
  if (!notice.window) return `${cadence} digest`;
  const first = notice.window.start.toISOString().slice(0, 10);
  const last = new Date(notice.window.end.getTime() - DAY).toISOString().slice(0, 10);
  return first === last ? `${cadence} digest for ${first}` : `${cadence} digest for ${first} to ${last}`;
}

/**
 * Characters quoted of one transcript line by the email and the landing page: a line may be
 * 100,000 characters, and uncut a digest email of 50 such matches was 73 MB (docs/channels.md).
 */
export const QUOTED_LINE_CHARS = 800;
/** Characters shown of a speaker name beside a quoted line. */
export const QUOTED_SPEAKER_CHARS = 120;

/** At most `max` UTF-16 units (never fewer than the characters a reader counts), never splitting a pair. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  return `${/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
