import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildChatMessage,
  CHAT_BLOCKS_TEXT_BUDGET,
  CHAT_MATCH_LIMIT,
  type ChatBlock,
  SLACK_LIMITS,
} from '../../src/chat/blocks.ts';
import type { AlertNotice, NoticeMatch } from '../../src/email/notice.ts';

const BASE = 'https://earshot.example.com';

const match = (n: number, extra: Partial<NoticeMatch> = {}): NoticeMatch => ({
  matchId: `mat_${n}`,
  episodeTitle: `Episode ${n}`,
  podcastTitle: `Show ${n}`,
  artworkUrl: `https://cdn.example.com/${n}.jpg`,
  episodeUrl: `https://podcasts.example.com/ep/${n}`,
  publishedAt: new Date('2026-03-01T06:00:00Z'),
  mentionCount: 1,
  lines: [{ text: 'Acme sponsors this show.', speaker: 'Host', startSeconds: 61 }],
  ...extra,
});

const sectionTexts = (blocks: ChatBlock[]) =>
  blocks.flatMap((b) => (b.type === 'section' ? [b.text.text] : []));

/** Every `text` and `alt_text` of the blocks: what Slack's undocumented total limit counts. */
const textLength = (blocks: ChatBlock[]) =>
  blocks.reduce((sum, block) => {
    if (block.type === 'section')
      return sum + block.text.text.length + (block.accessory?.alt_text.length ?? 0);
    if (block.type === 'header') return sum + block.text.text.length;
    if (block.type === 'context') return sum + block.elements.reduce((n, e) => n + e.text.length, 0);
    return sum + block.elements.reduce((n, e) => n + e.text.text.length, 0);
  }, 0);

function expectWithinSlackLimits(blocks: ChatBlock[]) {
  expect(blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocksPerMessage);
  // Slack refuses blocks past about 12,000 characters of text in all (msg_blocks_too_long).
  expect(textLength(blocks)).toBeLessThanOrEqual(10_000);
  for (const block of blocks) {
    if (block.type === 'section')
      expect(block.text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.sectionText);
    if (block.type === 'header') expect(block.text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.headerText);
  }
}

describe('building the chat message', () => {
  it('shows a realtime match with its episode link, quoted lines, artwork and the landing button', () => {
    const notice: AlertNotice = {
      kind: 'realtime',
      deliveryId: 'dlv_c1',
      alert: { id: 'alr_1', title: 'Acme mentions' },
      matchCount: 1,
      matches: [match(1)],
    };
    const message = buildChatMessage(notice, BASE);
    expect(message.text).toBe(
      `Acme mentions: new match in Show 1 — Episode 1 ${BASE}/alerts/deliveries/dlv_c1`,
    );
    expect(message.blocks[0]).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: 'Acme mentions', emoji: true },
    });
    const section = message.blocks.find((b) => b.type === 'section');
    expect(section).toEqual({
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: '*<https://podcasts.example.com/ep/1|Episode 1>*\nShow 1 · 2026-03-01 · 1 mention\n> `1:01` *Host:* Acme sponsors this show.',
      },
      accessory: { type: 'image', image_url: 'https://cdn.example.com/1.jpg', alt_text: 'Show 1' },
    });
    expect(message.blocks.at(-1)).toMatchObject({
      type: 'actions',
      elements: [{ type: 'button', url: `${BASE}/alerts/deliveries/dlv_c1` }],
    });
  });

  it('caps a large digest with an "…and N more" line linking to the landing page', () => {
    const notice: AlertNotice = {
      kind: 'digest',
      deliveryId: 'dlv_big',
      alert: { id: 'alr_1', title: 'Acme daily' },
      cadence: 'DAILY',
      window: { start: new Date('2026-03-01T00:00:00Z'), end: new Date('2026-03-02T00:00:00Z') },
      matchCount: 300,
      matches: Array.from({ length: 100 }, (_, i) => match(i + 1)),
    };
    const { blocks, text } = buildChatMessage(notice, BASE);
    expectWithinSlackLimits(blocks);
    expect(text).toContain('300 matches (daily digest for 2026-03-01)');
    const texts = sectionTexts(blocks);
    expect(texts).toHaveLength(CHAT_MATCH_LIMIT + 1);
    expect(texts.at(-1)).toBe(
      `…and ${300 - CHAT_MATCH_LIMIT} more matches: <${BASE}/alerts/deliveries/dlv_big|see them all>`,
    );
  });

  it("keeps a digest's blocks within their text budget, counting the matches left out in the landing line", () => {
    const lines = Array.from({ length: 5 }, (_, i) => ({
      text: 'Jensen Huang said that chips are the future of computing, '.repeat(3),
      speaker: 'Hannah Host',
      startSeconds: 60 * i,
    }));
    const notice: AlertNotice = {
      kind: 'digest',
      deliveryId: 'dlv_budget',
      alert: { id: 'alr_1', title: 'Jensen daily' },
      cadence: 'DAILY',
      window: { start: new Date('2026-03-01T00:00:00Z'), end: new Date('2026-03-02T00:00:00Z') },
      matchCount: 40,
      matches: Array.from({ length: 40 }, (_, i) => match(i + 1, { lines })),
    };
    // Twenty such sections were 21,800 characters: Slack answers msg_blocks_too_long.
    const { blocks } = buildChatMessage(notice, BASE);
    expect(textLength(blocks)).toBeLessThanOrEqual(CHAT_BLOCKS_TEXT_BUDGET);
    expectWithinSlackLimits(blocks);
    const texts = sectionTexts(blocks);
    const shown = texts.length - 1;
    expect(shown).toBeGreaterThan(1);
    expect(shown).toBeLessThan(CHAT_MATCH_LIMIT);
    expect(texts.at(-1)).toBe(
      `…and ${40 - shown} more matches: <${BASE}/alerts/deliveries/dlv_budget|see them all>`,
    );
  });

  it('truncates a match with very long lines to one section within the limit, counting the lines left out', () => {
    const long = 'word '.repeat(600);
    const notice: AlertNotice = {
      kind: 'realtime',
      deliveryId: 'dlv_long',
      alert: { id: 'alr_1', title: 'T'.repeat(400) },
      matchCount: 1,
      matches: [
        match(1, {
          episodeTitle: 'E'.repeat(2000),
          lines: Array.from({ length: 40 }, () => ({ text: long, speaker: 'S' })),
        }),
      ],
    };
    const { blocks } = buildChatMessage(notice, BASE);
    expectWithinSlackLimits(blocks);
    expect(blocks[0]).toMatchObject({ type: 'header' });
    const [section] = sectionTexts(blocks);
    expect(section).toMatch(/_…and \d+ more lines_$/);
  });

  it('escapes mrkdwn control characters so transcript text cannot ping a channel or forge a link', () => {
    const notice: AlertNotice = {
      kind: 'realtime',
      deliveryId: 'dlv_esc',
      alert: { id: 'alr_1', title: 'Acme' },
      matchCount: 1,
      matches: [
        match(1, {
          episodeUrl: undefined,
          episodeTitle: 'Q&A <b>',
          lines: [{ text: 'Hey <!channel> see <https://evil.example|this>' }],
        }),
      ],
    };
    const [section] = sectionTexts(buildChatMessage(notice, BASE).blocks);
    expect(section).toContain('*Q&amp;A &lt;b&gt;*');
    expect(section).toContain('Hey &lt;!channel&gt; see &lt;https://evil.example|this&gt;');
    expect(section).not.toContain('<!channel>');
  });

  it('stays within Slack limits for any notice', () => {
    const nasty = (maxLength: number) =>
      fc.oneof(
        fc.string({ maxLength }),
        fc.string({ unit: fc.constantFrom('<', '>', '&', '|', '*', ' ', '\n', 'a', '😀'), maxLength }),
      );
    const url = fc.oneof(
      fc.webUrl(),
      fc.nat(4000).map((n) => `https://cdn.example.com/${'a'.repeat(n)}`),
    );
    const line = fc.record({
      text: nasty(3000),
      speaker: fc.option(nasty(300), { nil: undefined }),
      startSeconds: fc.option(fc.nat(100_000), { nil: undefined }),
    });
    const noticeMatch = fc.record({
      matchId: fc.string(),
      episodeTitle: nasty(2000),
      podcastTitle: nasty(2000),
      mentionCount: fc.nat(1000),
      lines: fc.array(line, { maxLength: 30 }),
      episodeUrl: fc.option(url, { nil: undefined }),
      artworkUrl: fc.option(url, { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(noticeMatch, { maxLength: 60 }), nasty(500), (matches, title) => {
        const notice: AlertNotice = {
          kind: matches.length === 1 ? 'realtime' : 'digest',
          deliveryId: 'dlv_p',
          alert: { id: 'a', title },
          matchCount: matches.length * 2,
          matches,
        };
        expectWithinSlackLimits(buildChatMessage(notice, BASE).blocks);
      }),
      { numRuns: 100 },
    );
  });
});
