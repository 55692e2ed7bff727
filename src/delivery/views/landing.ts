import type { DeliveredMatch, DeliveryRow } from '../../../projections/deliveries/queries.ts';
import {
  formatOffset,
  plural,
  QUOTED_LINE_CHARS,
  QUOTED_SPEAKER_CHARS,
  truncate,
} from '../../email/notice.ts';
import { popularityBadge } from '../../matching/engine/popularity.ts';
import { listenUrl, mentionLines } from '../notice.ts';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
export const escapeHtml = (text: unknown) => String(text ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** Only absolute http(s) URLs become links or images; anything else (javascript:, data:) is dropped. */
function safeUrl(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.toString() : undefined;
  } catch {
    return undefined;
  }
}

const LINES_PER_MATCH = 5;

const STYLE = `
*{box-sizing:border-box}
body{margin:0;background:#f4f4f6;color:#1d1d22;font:16px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;-webkit-text-size-adjust:100%}
main{max-width:720px;margin:0 auto;padding:16px}
header{padding:8px 4px 16px}
.kicker{margin:0;color:#5b5b66;font-size:14px;text-transform:uppercase;letter-spacing:.04em}
h1{margin:4px 0;font-size:26px;line-height:1.25;overflow-wrap:anywhere}
.meta{margin:0;color:#5b5b66;font-size:14px}
ol.matches{list-style:none;margin:0;padding:0}
.match{background:#fff;border-radius:12px;padding:16px;margin:0 0 14px;box-shadow:0 1px 3px rgba(0,0,0,.08)}
.head{display:flex;gap:12px;align-items:flex-start}
.art{width:72px;height:72px;flex:0 0 72px;border-radius:8px;object-fit:cover;background:#dcdce3}
.podcast{margin:0;color:#5b5b66;font-size:14px;overflow-wrap:anywhere}
h2{margin:2px 0 4px;font-size:18px;line-height:1.3;overflow-wrap:anywhere}
.facts{margin:0;color:#5b5b66;font-size:13px}
.badge{display:inline-block;background:#1d4ed8;color:#fff;border-radius:999px;padding:1px 8px;font-size:12px;font-weight:600}
ul.lines{list-style:none;margin:12px 0 0;padding:0}
ul.lines li{border-left:3px solid #1d4ed8;padding:4px 0 4px 10px;margin:0 0 8px;overflow-wrap:anywhere}
.when{color:#5b5b66;font-size:13px;font-variant-numeric:tabular-nums}
.speaker{font-weight:600;font-size:13px}
.more{color:#5b5b66;font-size:13px;margin:0}
.links{margin:12px 0 0;display:flex;flex-wrap:wrap;gap:8px}
.links a{display:inline-block;padding:8px 14px;border-radius:8px;background:#1d4ed8;color:#fff;text-decoration:none;font-weight:600;font-size:14px}
.links a.secondary{background:#e6e8f0;color:#1d1d22}
nav.pages a{color:#1d4ed8}
footer{color:#5b5b66;font-size:12px;padding:16px 4px}
`;

function describe(row: DeliveryRow): string {
  if (row.type !== 'alert.digest') return 'New match';
  const cadence = row.cadence === 'WEEKLY' ? 'Weekly digest' : 'Daily digest';
  if (!row.window_start || !row.window_end) return cadence;
  const first = row.window_start.toISOString().slice(0, 10);
  const last = new Date(row.window_end.getTime() - 86_400_000).toISOString().slice(0, 10);
  return first === last ? `${cadence} for ${first}` : `${cadence} for ${first} to ${last}`;
}

function renderMatch(match: DeliveredMatch): string {
  const data = match.data;
  const episode = data.episode ?? {};
  const artwork = safeUrl(episode.image_url ?? episode.podcast_image_url);
  const badge = episode.podcast_popularity_badge ?? popularityBadge(episode.podcast_popularity);
  const published = episode.published_at ? new Date(episode.published_at) : undefined;
  const lines = mentionLines(data);
  const listen = safeUrl(listenUrl(data));
  const audio = safeUrl(episode.audio_url);
  const facts = [
    badge ? `<span class="badge">${escapeHtml(badge)}</span>` : '',
    published && !Number.isNaN(published.getTime())
      ? `<time datetime="${escapeHtml(published.toISOString())}">${escapeHtml(published.toISOString().slice(0, 10))}</time>`
      : '',
    escapeHtml(plural(data.mentionCount, 'mention')),
  ].filter(Boolean);
  const shown = lines.slice(0, LINES_PER_MATCH);
  return `<li class="match" id="match-${escapeHtml(match.matchId)}" data-match-id="${escapeHtml(match.matchId)}">
<div class="head">${
    artwork
      ? `<img class="art" src="${escapeHtml(artwork)}" alt="${escapeHtml(episode.podcast_title ?? 'Podcast')} artwork" width="72" height="72" loading="lazy">`
      : '<div class="art" role="img" aria-label="No artwork"></div>'
  }<div>
<p class="podcast">${escapeHtml(episode.podcast_title ?? 'Unknown podcast')}</p>
<h2 class="episode">${escapeHtml(episode.title ?? 'Untitled episode')}</h2>
<p class="facts">${facts.join(' · ')}</p>
</div></div>
${
  shown.length
    ? `<ul class="lines">${shown
        .map(
          (line) =>
            `<li class="line">${line.startSeconds !== undefined ? `<span class="when">${escapeHtml(formatOffset(line.startSeconds))}</span> ` : ''}${
              line.speaker
                ? `<span class="speaker">${escapeHtml(truncate(line.speaker, QUOTED_SPEAKER_CHARS))}</span> `
                : ''
            }<q>${escapeHtml(truncate(line.text, QUOTED_LINE_CHARS))}</q></li>`,
        )
        .join('')}</ul>`
    : ''
}${lines.length > shown.length ? `<p class="more">…and ${escapeHtml(plural(lines.length - shown.length, 'more line'))}</p>` : ''}
${
  listen || audio
    ? `<p class="links">${listen ? `<a class="listen" href="${escapeHtml(listen)}" rel="noopener noreferrer">Listen to the episode</a>` : ''}${
        audio && audio !== listen
          ? `<a class="secondary" href="${escapeHtml(audio)}" rel="noopener noreferrer">Audio file</a>`
          : ''
      }</p>`
    : ''
}
</li>`;
}

/**
 * The delivery landing page (GET /alerts/deliveries/{id}): the public view as a page that needs no
 * JavaScript and reads on a phone, with the mention lines the email or chat message showed.
 */
export function renderLanding(
  row: DeliveryRow,
  matches: readonly DeliveredMatch[],
  options: { nextPageUrl?: string | undefined },
): string {
  const title = row.alert_title;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)} · earshot</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<header>
<p class="kicker">earshot alert · ${escapeHtml(describe(row))}</p>
<h1>${escapeHtml(title)}</h1>
<p class="meta">${escapeHtml(plural(row.match_count, 'match', 'matches'))} · ${escapeHtml(row.created_at.toISOString().slice(0, 16).replace('T', ' '))} UTC</p>
</header>
${
  matches.length
    ? `<ol class="matches">${matches.map(renderMatch).join('\n')}</ol>`
    : '<p>The matches of this delivery are not available yet.</p>'
}
${options.nextPageUrl ? `<nav class="pages"><a href="${escapeHtml(options.nextPageUrl)}">More matches</a></nav>` : ''}
<footer>Sent by earshot. This page is shared by its link; anyone with the link can read it.</footer>
</main>
</body>
</html>
`;
}

export function renderNotFound(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Not found · earshot</title><style>${STYLE}</style></head>
<body><main><header><h1>Delivery not found</h1><p class="meta">The link may be incomplete.</p></header></main></body></html>
`;
}
