import { escapeHtml } from '../../delivery/views/landing.ts';

const SCOPE_TEXT: Record<string, string> = {
  'mcp:read': 'Read podcasts, episodes, transcripts, ads and your alerts',
  'mcp:write': 'Create alerts in the project',
};

const STYLE = `*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;background:#f4f4f6;color:#1b1b1f}
main{max-width:28rem;margin:0 auto;padding:1.5rem 1rem}h1{font-size:1.35rem;line-height:1.3;margin:0 0 .5rem}
.card{background:#fff;border-radius:12px;padding:1.25rem;box-shadow:0 1px 3px #0002}.host{font-family:ui-monospace,monospace;word-break:break-all}
ul{padding-left:1.2rem}label{display:block;font-weight:600;margin:1rem 0 .35rem}input[type=password]{width:100%;padding:.75rem;font-size:1rem;border:1px solid #8a8a94;border-radius:8px}
.hint{color:#55555f;font-size:.9rem;margin:.35rem 0 0}.warn{background:#fff4d6;color:#5c4100;border-radius:8px;padding:.5rem .75rem}.error{background:#fde8e8;color:#8a1212;border-radius:8px;padding:.6rem .75rem;margin:0 0 1rem}
.actions{display:flex;gap:.75rem;margin-top:1.25rem}button{flex:1;min-height:48px;font-size:1rem;border-radius:8px;border:1px solid #1b1b1f;background:#fff;color:#1b1b1f}
button.approve{background:#1b4fd8;border-color:#1b4fd8;color:#fff;font-weight:600}`;

const DEVICE_WARNING =
  'That is a program on this device, and any program could give this address: approve only if you just started this connection yourself.';

export interface ConsentView {
  clientName: string;
  /**
   * For a client identified by a metadata document URL: that URL's host, the one thing about it
   * earshot can vouch for. It heads the page; the self-declared name is shown as a claim.
   */
  clientIdHost?: string;
  /**
   * The client is known by its document alone and returns to a loopback address or an app's own
   * scheme: any program on the device can claim that, so the name and host prove nothing here.
   */
  deviceRedirect?: boolean;
  redirectUri: string;
  scopes: string[];
  /** Hidden fields that carry the authorization request and the CSRF token through the form. */
  fields: Record<string, string>;
  error?: string;
}

/** The server-rendered consent page (docs/agents.md): sign in with a project API key, approve or deny. */
export function renderConsentPage(view: ConsentView) {
  const host = new URL(view.redirectUri).host;
  const hidden = Object.entries(view.fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  const scopes = view.scopes.map(
    (scope) => `<li><strong>${escapeHtml(scope)}</strong>: ${escapeHtml(SCOPE_TEXT[scope] ?? scope)}</li>`,
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Connect ${escapeHtml(view.clientIdHost ?? view.clientName)} to earshot</title><style>${STYLE}</style></head>
<body><main><div class="card">
${
  view.clientIdHost === undefined
    ? `<h1>${escapeHtml(view.clientName)} wants to use earshot</h1>`
    : `<h1>An application from <span class="host" id="client-host">${escapeHtml(view.clientIdHost)}</span> wants to use earshot</h1>
<p id="client-claim">It calls itself <strong>${escapeHtml(view.clientName)}</strong>. Only its address is verified: anyone can publish any name, so approve only if you expect an application from <span class="host">${escapeHtml(view.clientIdHost)}</span>.</p>`
}
<p>It will return you to <span class="host" id="redirect-host">${escapeHtml(host)}</span>.</p>
${view.deviceRedirect ? `<p class="warn" id="device-warning">${DEVICE_WARNING}</p>\n` : ''}<p>It asks to:</p><ul id="scopes">${scopes.join('')}</ul>
<form method="post" action="/oauth/authorize">${hidden}
${view.error ? `<p class="error" role="alert">${escapeHtml(view.error)}</p>` : ''}
<label for="api_key">API key of the project to connect</label>
<input type="password" id="api_key" name="api_key" autocomplete="off" spellcheck="false">
<p class="hint">The key selects the project; the application never sees it.</p>
<div class="actions"><button type="submit" name="decision" value="deny">Deny</button>
<button type="submit" name="decision" value="approve" class="approve">Approve</button></div>
</form></div></main></body></html>`;
}

export function renderErrorPage(title: string, detail: string) {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main><div class="card"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(detail)}</p></div></main></body></html>`;
}
