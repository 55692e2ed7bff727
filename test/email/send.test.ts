import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EMAIL_LINE_LIMIT, EMAIL_MATCH_LIMIT, emailSubject } from '../../src/email/compose.ts';
import { createMailer, type Mailer } from '../../src/email/mailer.ts';
import {
  type AlertNotice,
  type NoticeMatch,
  QUOTED_LINE_CHARS,
  QUOTED_SPEAKER_CHARS,
} from '../../src/email/notice.ts';
import { sendAlertEmail } from '../../src/email/send.ts';
import { parseMail, type SmtpCapture, startSmtpServer } from '../support/smtp.ts';

const BASE = 'https://earshot.example.com';
const FROM = 'earshot <alerts@earshot.example.com>';
const TOKEN = 'dis_2Xk9+/=token';

const match = (n: number, extra: Partial<NoticeMatch> = {}): NoticeMatch => ({
  matchId: `mat_${n}`,
  episodeTitle: `Episode ${n}: the interview`,
  podcastTitle: `Show ${n}`,
  artworkUrl: `https://cdn.example.com/art/${n}.jpg`,
  episodeUrl: `https://podcasts.example.com/ep/${n}`,
  publishedAt: new Date('2026-03-01T06:00:00Z'),
  mentionCount: 2,
  lines: [
    { text: 'We switched our whole stack to Acme last year.', speaker: 'Dana Host', startSeconds: 754 },
    { text: 'Acme was the obvious choice.', speaker: 'Guest', startSeconds: 3725 },
  ],
  ...extra,
});

const realtime: AlertNotice = {
  kind: 'realtime',
  deliveryId: 'dlv_4fQ2mZ',
  alert: { id: 'alr_1', title: 'Acme Café – mentions' },
  matchCount: 1,
  matches: [match(1)],
};

let smtp: SmtpCapture;
let mailer: Mailer;
let dataDir: string;

beforeAll(async () => {
  smtp = await startSmtpServer();
  dataDir = await mkdtemp(join(tmpdir(), 'earshot-email-'));
  mailer = createMailer({ smtpUrl: smtp.url, dataDir, timeoutMs: 5_000 });
});
afterAll(async () => {
  mailer.close();
  await smtp.close();
  await rm(dataDir, { recursive: true, force: true });
});
beforeEach(() => {
  smtp.messages.length = 0;
});

describe('sending an alert email over SMTP', () => {
  it('delivers a realtime match with the title in the subject, text and HTML parts and the landing link', async () => {
    const outcome = await sendAlertEmail(mailer, {
      notice: realtime,
      to: 'ana@example.org',
      from: FROM,
      publicBaseUrl: BASE,
      disableToken: TOKEN,
    });
    expect(outcome).toMatchObject({
      ok: true,
      recipient: 'ana@example.org',
      responseCode: 250,
      retryable: false,
    });
    expect(outcome.response).toContain('queued as m1');
    expect(smtp.messages).toHaveLength(1);
    const [message] = smtp.messages;
    expect(message?.to).toEqual(['ana@example.org']);

    const mail = parseMail(message?.raw ?? '');
    expect(mail.header('subject')).toBe('Acme Café – mentions: new match in Show 1');
    expect(mail.header('message-id')).toBe(outcome.messageId);
    const text = mail.parts.get('text/plain') ?? '';
    const html = mail.parts.get('text/html') ?? '';
    const landing = `${BASE}/alerts/deliveries/dlv_4fQ2mZ`;
    const disable = `${BASE}/v1/alerts/disable?token=${encodeURIComponent(TOKEN)}`;
    expect(text).toContain('Show 1 — Episode 1: the interview');
    expect(text).toContain('[12:34] Dana Host: “We switched our whole stack to Acme last year.”');
    expect(text).toContain('[1:02:05] Guest: “Acme was the obvious choice.”');
    expect(text).toContain(`View this delivery: ${landing}`);
    expect(text).toContain(`Disable this alert: ${disable}`);
    expect(html).toContain(`href="${landing}"`);
    expect(html).toContain(`href="${disable}"`);
    expect(html).toContain('<img src="https://cdn.example.com/art/1.jpg"');
    expect(html).toContain('Acme Café – mentions');
  });

  it('carries one-click List-Unsubscribe headers pointing at the disable endpoint', async () => {
    await sendAlertEmail(mailer, {
      notice: realtime,
      to: 'ana@example.org',
      from: FROM,
      publicBaseUrl: BASE,
      disableToken: TOKEN,
    });
    const mail = parseMail(smtp.messages[0]?.raw ?? '');
    expect(mail.header('list-unsubscribe')).toBe(
      `<${BASE}/v1/alerts/disable?token=${encodeURIComponent(TOKEN)}>`,
    );
    expect(mail.header('list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
    expect(mail.header('auto-submitted')).toBe('auto-generated');
  });

  it('escapes episode and transcript text in the HTML part', async () => {
    const notice: AlertNotice = {
      ...realtime,
      matches: [
        match(2, {
          episodeTitle: '<script>alert(1)</script> & more',
          lines: [{ text: '"quoted" <b>bold</b>' }],
        }),
      ],
    };
    await sendAlertEmail(mailer, {
      notice,
      to: 'ana@example.org',
      from: FROM,
      publicBaseUrl: BASE,
      disableToken: TOKEN,
    });
    const html = parseMail(smtp.messages[0]?.raw ?? '').parts.get('text/html') ?? '';
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; more');
    expect(html).not.toContain('<script>');
    expect(html).toContain('&quot;quoted&quot; &lt;b&gt;bold&lt;/b&gt;');
  });

  it('bundles a digest, showing the first matches and counting the rest', async () => {
    const notice: AlertNotice = {
      kind: 'digest',
      deliveryId: 'dlv_digest1',
      alert: { id: 'alr_1', title: 'Acme weekly' },
      cadence: 'WEEKLY',
      window: { start: new Date('2026-02-23T00:00:00Z'), end: new Date('2026-03-02T00:00:00Z') },
      matchCount: 120,
      matches: Array.from({ length: 60 }, (_, i) => match(i + 1)),
    };
    await sendAlertEmail(mailer, {
      notice,
      to: 'ana@example.org',
      from: FROM,
      publicBaseUrl: BASE,
      disableToken: TOKEN,
    });
    const mail = parseMail(smtp.messages[0]?.raw ?? '');
    expect(mail.header('subject')).toBe(
      'Acme weekly: 120 matches (weekly digest for 2026-02-23 to 2026-03-01)',
    );
    const text = mail.parts.get('text/plain') ?? '';
    expect(text).toContain(`Show ${EMAIL_MATCH_LIMIT} — Episode ${EMAIL_MATCH_LIMIT}`);
    expect(text).not.toContain(`Show ${EMAIL_MATCH_LIMIT + 1} —`);
    expect(text).toContain(`…and ${120 - EMAIL_MATCH_LIMIT} more matches.`);
    expect(text).toContain(`${BASE}/alerts/deliveries/dlv_digest1`);
  });

  it('quotes at most 800 characters of a transcript line, so a digest of 100,000-character lines stays small', async () => {
    const long = `Acme & ${"it's <b> ".repeat(11_111)}`.slice(0, 100_000);
    const lines = Array.from({ length: EMAIL_LINE_LIMIT }, (_, i) => ({
      text: long,
      speaker: 'S'.repeat(500),
      startSeconds: i,
    }));
    const notice: AlertNotice = {
      kind: 'digest',
      deliveryId: 'dlv_longlines',
      alert: { id: 'alr_1', title: 'Acme daily' },
      cadence: 'DAILY',
      window: { start: new Date('2026-03-01T00:00:00Z'), end: new Date('2026-03-02T00:00:00Z') },
      matchCount: EMAIL_MATCH_LIMIT,
      matches: Array.from({ length: EMAIL_MATCH_LIMIT }, (_, i) => match(i + 1, { lines })),
    };
    const outcome = await sendAlertEmail(mailer, {
      notice,
      to: 'ana@example.org',
      from: FROM,
      publicBaseUrl: BASE,
      disableToken: TOKEN,
    });
    expect(outcome.ok).toBe(true);
    const raw = smtp.messages[0]?.raw ?? '';
    // Uncut, this message was 73 MB; every quoted line is now 800 characters at most.
    expect(raw.length).toBeLessThan(1_500_000);
    const mail = parseMail(raw);
    expect(mail.parts.get('text/plain')).toContain(
      `${'S'.repeat(QUOTED_SPEAKER_CHARS - 1)}…: “${long.slice(0, QUOTED_LINE_CHARS - 1)}…”`,
    );
    expect(mail.parts.get('text/html')).toContain('it&#39;s &lt;b&gt; it&#39;s');
    expect(mail.parts.get('text/html')).not.toContain(
      long.slice(0, QUOTED_LINE_CHARS + 1).replace(/&/g, '&amp;'),
    );
  });

  it('sends each recipient a message of their own', async () => {
    for (const to of ['ana@example.org', 'ben@example.org']) {
      await sendAlertEmail(mailer, {
        notice: realtime,
        to,
        from: FROM,
        publicBaseUrl: BASE,
        disableToken: TOKEN,
      });
    }
    expect(smtp.messages.map((m) => m.to)).toEqual([['ana@example.org'], ['ben@example.org']]);
    const ids = smtp.messages.map((m) => parseMail(m.raw).header('message-id'));
    expect(new Set(ids).size).toBe(2);
  });

  it('reports a 5xx recipient rejection as permanent with the SMTP reply', async () => {
    smtp.rejectRecipient('gone@example.org', 550, 'No such user here');
    const outcome = await sendAlertEmail(mailer, {
      notice: realtime,
      to: 'gone@example.org',
      from: FROM,
      publicBaseUrl: BASE,
      disableToken: TOKEN,
    });
    expect(outcome).toMatchObject({
      ok: false,
      recipient: 'gone@example.org',
      responseCode: 550,
      retryable: false,
    });
    expect(outcome.error).toContain('No such user here');
    expect(smtp.messages).toHaveLength(0);
  });

  it('reports a 4xx recipient rejection as retryable', async () => {
    smtp.rejectRecipient('full@example.org', 452, 'Mailbox full, try later');
    const outcome = await sendAlertEmail(mailer, {
      notice: realtime,
      to: 'full@example.org',
      from: FROM,
      publicBaseUrl: BASE,
      disableToken: TOKEN,
    });
    expect(outcome).toMatchObject({ ok: false, responseCode: 452, retryable: true });
    expect(outcome.error).toContain('Mailbox full');
  });

  it('reports an unreachable SMTP server as retryable', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const down = createMailer({ smtpUrl: `smtp://127.0.0.1:${port}`, dataDir, timeoutMs: 2_000 });
    try {
      const outcome = await sendAlertEmail(down, {
        notice: realtime,
        to: 'ana@example.org',
        from: FROM,
        publicBaseUrl: BASE,
        disableToken: TOKEN,
      });
      expect(outcome).toMatchObject({ ok: false, retryable: true });
      expect(outcome.error).toContain('ECONNREFUSED');
    } finally {
      down.close();
    }
  });
});

describe('writing alert emails to the outbox when no SMTP server is configured', () => {
  it('writes one .eml per recipient under DATA_DIR/outbox and replaces it on a retry', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'earshot-outbox-'));
    const outbox = createMailer({ dataDir: dir });
    try {
      expect(outbox.kind).toBe('outbox');
      const input = {
        notice: realtime,
        to: 'ana@example.org',
        from: FROM,
        publicBaseUrl: BASE,
        disableToken: TOKEN,
      };
      const first = await sendAlertEmail(outbox, input);
      const retry = await sendAlertEmail(outbox, input);
      await sendAlertEmail(outbox, { ...input, to: 'ben@example.org' });
      expect(first).toMatchObject({ ok: true, retryable: false });
      expect(retry.file).toBe(first.file);
      expect(first.response).toBe(`written to ${first.file}`);
      const files = (await readdir(join(dir, 'outbox'))).sort();
      expect(files).toHaveLength(2);
      expect(files.every((f) => f.startsWith('dlv_4fQ2mZ-') && f.endsWith('.eml'))).toBe(true);

      const mail = parseMail(await readFile(first.file ?? '', 'utf8'));
      expect(mail.header('to')).toBe('ana@example.org');
      expect(mail.header('subject')).toBe(emailSubject(realtime));
      expect(mail.header('list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
      expect(mail.parts.get('text/plain')).toContain(`${BASE}/alerts/deliveries/dlv_4fQ2mZ`);
      expect(mail.parts.get('text/html')).toContain('View this delivery');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
