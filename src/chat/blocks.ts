import {
  type AlertNotice,
  describeNotice,
  formatOffset,
  landingUrl,
  type NoticeMatch,
  plural,
  truncate,
} from '../email/notice.ts';

/** Slack's Block Kit limits (https://docs.slack.dev/reference/block-kit/blocks). */
export const SLACK_LIMITS = {
  blocksPerMessage: 50,
  sectionText: 3000,
  headerText: 150,
  buttonText: 75,
  url: 3000,
  altText: 2000,
} as const;

/** Matches rendered as their own section; the rest are a count and the landing link. */
export const CHAT_MATCH_LIMIT = 20;
/**
 * Characters of text (every `text` and `alt_text`) in one message's blocks. Slack refuses blocks
 * whose text adds up past about 12,000 characters with `msg_blocks_too_long`, a limit it does not
 * document (docs/channels.md, Chat); sections past this budget are left to the landing link.
 */
export const CHAT_BLOCKS_TEXT_BUDGET = 8000;
/** Transcript lines quoted per match (fewer when the section would exceed its limit). */
export const CHAT_LINE_LIMIT = 5;
const LINE_CHARS = 800;

interface PlainText {
  type: 'plain_text';
  text: string;
  emoji?: boolean;
}
interface Mrkdwn {
  type: 'mrkdwn';
  text: string;
}
export type ChatBlock =
  | { type: 'header'; text: PlainText }
  | { type: 'section'; text: Mrkdwn; accessory?: { type: 'image'; image_url: string; alt_text: string } }
  | { type: 'context'; elements: Mrkdwn[] }
  | { type: 'actions'; elements: Array<{ type: 'button'; action_id: string; text: PlainText; url: string }> };

export interface ChatMessage {
  /** Notification and accessibility fallback. */
  text: string;
  blocks: ChatBlock[];
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();
/** Slack mrkdwn control characters (https://docs.slack.dev/messaging/formatting-message-text). */
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/** Slack's escaping of text it would otherwise parse for mentions (`<!here>`) and links. */
const escapeText = (text: string) => text.replace(/[&<>]/g, (char) => ESCAPES[char]!);

/** One line of text, escaped for mrkdwn, at most `max` characters after escaping. */
function fitMrkdwn(text: string, max: number): string {
  const chars = Array.from(oneLine(text));
  let out = '';
  for (const [i, char] of chars.entries()) {
    const piece = ESCAPES[char] ?? char;
    const room = i === chars.length - 1 ? max : max - 1;
    if (out.length + piece.length > room) return `${out}…`;
    out += piece;
  }
  return out;
}

const MAX_LINK_URL = 1000;
const isWebUrl = (url: string | undefined, maxLength: number = SLACK_LIMITS.url): url is string => {
  if (!url || url.length > maxLength) return false;
  try {
    return ['https:', 'http:'].includes(new URL(url).protocol);
  } catch {
    return false;
  }
};
const link = (url: string, escapedLabel: string) =>
  `<${url.replace(/\|/g, '%7C').replace(/>/g, '%3E')}|${escapedLabel.replace(/\|/g, '¦')}>`;

/** One match as section text, never longer than Slack's section limit. */
export function matchSectionText(match: NoticeMatch): string {
  // Worst case of the head: 1000 (URL) + 600 + 400 + a few separators, well under 3000.
  const title = fitMrkdwn(match.episodeTitle, 600);
  const facts = [
    fitMrkdwn(match.podcastTitle, 400),
    match.publishedAt?.toISOString().slice(0, 10),
    plural(match.mentionCount, 'mention'),
  ];
  const head = [
    isWebUrl(match.episodeUrl, MAX_LINK_URL) ? `*${link(match.episodeUrl, title)}*` : `*${title}*`,
    facts.filter(Boolean).join(' · '),
  ].join('\n');
  const quotes = match.lines.slice(0, CHAT_LINE_LIMIT).map((line) => {
    const at = line.startSeconds === undefined ? '' : `\`${formatOffset(line.startSeconds)}\` `;
    const who = line.speaker ? `*${fitMrkdwn(line.speaker, 120)}:* ` : '';
    return `> ${at}${who}${fitMrkdwn(line.text, LINE_CHARS)}`;
  });
  let text = head;
  let shown = 0;
  for (const quote of quotes) {
    // Keep room for the "more lines" note so the section never exceeds the limit.
    if (text.length + 1 + quote.length > SLACK_LIMITS.sectionText - 40) break;
    text += `\n${quote}`;
    shown += 1;
  }
  const hidden = match.lines.length - shown;
  if (hidden > 0) text += `\n_…and ${plural(hidden, 'more line')}_`;
  return text;
}

/** The Block Kit message of one notice, within Slack's limits. */
export function buildChatMessage(notice: AlertNotice, publicBaseUrl: string): ChatMessage {
  const landing = landingUrl(publicBaseUrl, notice.deliveryId);
  const title = oneLine(notice.alert.title);
  const first = notice.matches[0];

  const summary =
    notice.kind === 'test'
      ? 'This is a test notification for this alert.'
      : notice.kind === 'realtime'
        ? 'New match'
        : `*${plural(notice.matchCount, 'match', 'matches')}* · ${describeNotice(notice)}`;

  const blocks: ChatBlock[] = [
    {
      type: 'header',
      text: { type: 'plain_text', text: truncate(title, SLACK_LIMITS.headerText), emoji: true },
    },
    { type: 'context', elements: [{ type: 'mrkdwn', text: summary }] },
  ];
  // What the header, context, the "…and N more" section and the button take of the budget.
  let budget = CHAT_BLOCKS_TEXT_BUDGET - title.length - summary.length - landing.length - 100;
  let shown = 0;
  for (const match of notice.matches.slice(0, CHAT_MATCH_LIMIT)) {
    const section = { type: 'section', text: { type: 'mrkdwn', text: matchSectionText(match) } } as const;
    const alt = truncate(oneLine(match.podcastTitle), SLACK_LIMITS.altText) || 'artwork';
    const accessory = isWebUrl(match.artworkUrl)
      ? { type: 'image' as const, image_url: match.artworkUrl, alt_text: alt }
      : undefined;
    const cost = section.text.text.length + (accessory ? alt.length : 0);
    // The first match is always shown: one section is within Slack's limits on its own.
    if (shown > 0 && cost > budget) break;
    blocks.push(accessory ? { ...section, accessory } : section);
    budget -= cost;
    shown += 1;
  }
  const hidden = Math.max(0, notice.matchCount - shown);
  if (hidden > 0) {
    blocks.push({
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: `…and ${plural(hidden, 'more match', 'more matches')}: <${landing}|see them all>`,
      },
    });
  }
  blocks.push({
    type: 'actions',
    elements: [
      {
        type: 'button',
        action_id: 'earshot_view_delivery',
        text: { type: 'plain_text', text: 'View delivery' },
        url: landing,
      },
    ],
  });

  const fallback =
    notice.kind === 'realtime' && first
      ? `${title}: new match in ${oneLine(first.podcastTitle)} — ${oneLine(first.episodeTitle)}`
      : `${title}: ${notice.kind === 'test' ? 'test notification' : `${plural(notice.matchCount, 'match', 'matches')} (${describeNotice(notice)})`}`;
  // Every character of the fallback but the landing URL is caller text or plain words: escape it whole.
  return { text: `${escapeText(truncate(fallback, 2000))} ${landing}`, blocks };
}
