import { createHash } from 'node:crypto';
import type { SendMailOptions } from 'nodemailer/lib/mailer';
import {
  type AlertNotice,
  describeNotice,
  disableUrl,
  formatOffset,
  landingUrl,
  type NoticeMatch,
  plural,
  QUOTED_LINE_CHARS,
  QUOTED_SPEAKER_CHARS,
  truncate,
} from './notice.ts';

/** Matches rendered in one email; the rest are a count and a link to the landing page. */
export const EMAIL_MATCH_LIMIT = 50;
/** Transcript lines shown per match. */
export const EMAIL_LINE_LIMIT = 5;

export interface AlertEmailInput {
  notice: AlertNotice;
  /** Exactly one recipient: every recipient gets a message of their own. */
  to: string;
  from: string;
  publicBaseUrl: string;
  /** The footer / List-Unsubscribe token that disables the alert. */
  disableToken: string;
  date?: Date;
}

/** A stable id for one recipient of one delivery: names the .eml file and the Message-ID. */
export function recipientKey(deliveryId: string, to: string): string {
  return createHash('sha256').update(`${deliveryId}\n${to.trim().toLowerCase()}`).digest('hex').slice(0, 16);
}

const singleLine = (text: string) => text.replace(/[\r\n\t]+/g, ' ').trim();

export function emailSubject(notice: AlertNotice): string {
  const title = singleLine(notice.alert.title);
  const first = notice.matches[0];
  if (notice.kind === 'realtime' && first) return `${title}: new match in ${singleLine(first.podcastTitle)}`;
  if (notice.kind === 'digest')
    return `${title}: ${plural(notice.matchCount, 'match', 'matches')} (${describeNotice(notice)})`;
  return `${title}: ${describeNotice(notice)}`;
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

const isWebUrl = (url: string | undefined): url is string => {
  if (!url) return false;
  try {
    return ['https:', 'http:'].includes(new URL(url).protocol);
  } catch {
    return false;
  }
};

function matchText(match: NoticeMatch): string {
  const lines = [`${singleLine(match.podcastTitle)} — ${singleLine(match.episodeTitle)}`];
  const facts = [plural(match.mentionCount, 'mention')];
  if (match.publishedAt) facts.unshift(`published ${match.publishedAt.toISOString().slice(0, 10)}`);
  lines.push(facts.join(', '));
  for (const line of match.lines.slice(0, EMAIL_LINE_LIMIT)) {
    const at = line.startSeconds === undefined ? '' : `[${formatOffset(line.startSeconds)}] `;
    const who = line.speaker ? `${truncate(singleLine(line.speaker), QUOTED_SPEAKER_CHARS)}: ` : '';
    lines.push(`  ${at}${who}“${truncate(singleLine(line.text), QUOTED_LINE_CHARS)}”`);
  }
  if (match.lines.length > EMAIL_LINE_LIMIT)
    lines.push(`  …and ${plural(match.lines.length - EMAIL_LINE_LIMIT, 'more line')}`);
  if (isWebUrl(match.episodeUrl)) lines.push(`Listen: ${match.episodeUrl}`);
  return lines.join('\n');
}

function matchHtml(match: NoticeMatch): string {
  const artwork = isWebUrl(match.artworkUrl)
    ? `<td width="72" valign="top" style="padding-right:12px"><img src="${escapeHtml(match.artworkUrl)}" width="72" height="72" alt="${escapeHtml(match.podcastTitle)}" style="border-radius:6px;display:block"></td>`
    : '';
  const title = isWebUrl(match.episodeUrl)
    ? `<a href="${escapeHtml(match.episodeUrl)}" style="color:#111">${escapeHtml(match.episodeTitle)}</a>`
    : escapeHtml(match.episodeTitle);
  const facts = [plural(match.mentionCount, 'mention')];
  if (match.publishedAt) facts.unshift(`published ${match.publishedAt.toISOString().slice(0, 10)}`);
  const quotes = match.lines
    .slice(0, EMAIL_LINE_LIMIT)
    .map((line) => {
      const at =
        line.startSeconds === undefined
          ? ''
          : `<span style="color:#888">${formatOffset(line.startSeconds)}</span> `;
      const who = line.speaker ? `<b>${escapeHtml(truncate(line.speaker, QUOTED_SPEAKER_CHARS))}:</b> ` : '';
      return `<p style="margin:4px 0">${at}${who}“${escapeHtml(truncate(line.text, QUOTED_LINE_CHARS))}”</p>`;
    })
    .join('');
  const more =
    match.lines.length > EMAIL_LINE_LIMIT
      ? `<p style="margin:4px 0;color:#888">…and ${plural(match.lines.length - EMAIL_LINE_LIMIT, 'more line')}</p>`
      : '';
  return `<table role="presentation" cellpadding="0" cellspacing="0" style="margin:16px 0"><tr>${artwork}<td valign="top">
<div style="color:#666;font-size:13px">${escapeHtml(match.podcastTitle)}</div>
<div style="font-size:16px;font-weight:bold">${title}</div>
<div style="color:#666;font-size:13px">${escapeHtml(facts.join(', '))}</div>
<div style="font-size:14px">${quotes}${more}</div>
</td></tr></table>`;
}

/** The nodemailer message for one recipient of one delivery. */
export function composeAlertEmail(input: AlertEmailInput): SendMailOptions {
  const { notice, to, publicBaseUrl } = input;
  const landing = landingUrl(publicBaseUrl, notice.deliveryId);
  const disable = disableUrl(publicBaseUrl, input.disableToken);
  const shown = notice.matches.slice(0, EMAIL_MATCH_LIMIT);
  const hidden = Math.max(0, notice.matchCount - shown.length);
  const title = singleLine(notice.alert.title);
  const intro =
    notice.kind === 'test'
      ? 'This is a test notification for your alert.'
      : notice.kind === 'realtime'
        ? 'A new match for your alert.'
        : `${plural(notice.matchCount, 'match', 'matches')} for your alert (${describeNotice(notice)}).`;
  const host = new URL(publicBaseUrl).hostname || 'earshot.localhost';

  const text = [
    title,
    intro,
    '',
    ...shown.flatMap((match) => [matchText(match), '']),
    ...(hidden > 0 ? [`…and ${plural(hidden, 'more match', 'more matches')}.`, ''] : []),
    `View this delivery: ${landing}`,
    '',
    '-- ',
    `You receive this because ${to} is a recipient of the alert "${title}".`,
    `Disable this alert: ${disable}`,
    '',
  ].join('\n');

  const html = `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#111;max-width:640px;margin:0 auto;padding:16px">
<h1 style="font-size:20px;margin:0 0 4px">${escapeHtml(title)}</h1>
<p style="margin:0 0 8px;color:#444">${escapeHtml(intro)}</p>
${shown.map(matchHtml).join('\n')}
${hidden > 0 ? `<p>…and ${escapeHtml(plural(hidden, 'more match', 'more matches'))}.</p>` : ''}
<p><a href="${escapeHtml(landing)}" style="display:inline-block;padding:8px 14px;background:#111;color:#fff;border-radius:6px;text-decoration:none">View this delivery</a></p>
<hr style="border:none;border-top:1px solid #ddd;margin:24px 0 8px">
<p style="font-size:12px;color:#888">You receive this because ${escapeHtml(to)} is a recipient of the alert “${escapeHtml(title)}”.
<a href="${escapeHtml(disable)}" style="color:#888">Disable this alert</a>.</p>
</body></html>
`;

  return {
    from: input.from,
    to,
    subject: emailSubject(notice),
    text,
    html,
    date: input.date ?? new Date(),
    messageId: `<${recipientKey(notice.deliveryId, to)}.${notice.deliveryId.replace(/[^A-Za-z0-9._-]/g, '')}@${host}>`,
    headers: {
      'List-Unsubscribe': `<${disable}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      'Auto-Submitted': 'auto-generated',
      'X-Earshot-Delivery-Id': notice.deliveryId,
    },
  };
}
