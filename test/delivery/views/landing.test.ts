import type { FastifyInstance } from 'fastify';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduleDueDigests } from '../../../consumers/digests/digests.ts';
import { type DeliveryFixture, deliveryFixture, deliveryRows } from '../support.ts';

const PHONE = { width: 390, height: 844 };

/** Width and height from a PNG's IHDR chunk. */
function pngSize(png: Buffer) {
  expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

describe('delivery landing page in a real browser', () => {
  let f: DeliveryFixture;
  let app: FastifyInstance;
  let browser: Browser;
  let base: string;
  let deliveryId: string;
  const titles: string[] = [];

  beforeAll(async () => {
    f = await deliveryFixture();
    app = await f.app();
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    const alert = await f.createAlert({
      title: 'Daily Jensen digest',
      delivery_cadence: 'DAILY',
      notifications: [{ type: 'EMAIL', email: 'ops@example.com' }],
    });
    for (let i = 0; i < 3; i++) {
      const match = await f.match(alert.id, {
        mentionCount: i + 1,
        episode: {
          podcast_id: 'pod-1',
          podcast_title: `Chip Talk ${i}`,
          title: `Episode ${i}: a very long title about accelerated computing and what comes after the GPU era ${i}`,
          duration_seconds: 3600,
          published_at: '2026-11-20T06:00:00.000Z',
          apple_podcasts_url: `https://podcasts.example.com/e${i}`,
          podcast_popularity: 0.995,
        },
      });
      titles.push(match.episode.title);
      f.clock.advance(60_000);
    }
    await f.fanOut();
    f.clock.set('2026-11-21T00:05:00Z');
    await scheduleDueDigests(f.fanoutDeps);
    await f.deliverAll();
    deliveryId = (await deliveryRows(f.db, alert.id))[0]!.id;
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await f?.close();
  });

  it('shows every match with its episode, badge, mention lines and listen link, readable at phone width without JavaScript', async () => {
    const context = await browser.newContext({
      viewport: PHONE,
      deviceScaleFactor: 2,
      javaScriptEnabled: false,
    });
    try {
      const page = await context.newPage();
      const response = await page.goto(`${base}/alerts/deliveries/${deliveryId}`);
      expect(response?.status()).toBe(200);
      await expect(page.locator('h1').textContent()).resolves.toBe('Daily Jensen digest');
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
        PHONE.width,
      );

      const matches = page.locator('li.match');
      expect(await matches.count()).toBe(3);
      for (let i = 0; i < 3; i++) {
        const match = matches.nth(i);
        await match.scrollIntoViewIfNeeded();
        const title = match.locator('h2.episode');
        await expect(title.textContent()).resolves.toBe(titles[i]);
        expect(await title.isVisible()).toBe(true);
        for (const part of [title, match.locator('li.line').first(), match.locator('a.listen')]) {
          const box = await part.boundingBox();
          expect(box).not.toBeNull();
          expect(box!.x).toBeGreaterThanOrEqual(0);
          expect(box!.x + box!.width).toBeLessThanOrEqual(PHONE.width);
          expect(box!.width).toBeGreaterThan(0);
          expect(box!.height).toBeGreaterThan(0);
        }
        await expect(match.locator('li.line').first().textContent()).resolves.toContain(
          'Our guest today is Jensen Huang.',
        );
        await expect(match.locator('.badge').textContent()).resolves.toBe('Top Podcast');
        await expect(match.locator('a.listen').getAttribute('href')).resolves.toBe(
          `https://podcasts.example.com/e${i}`,
        );
      }
      await page.evaluate('window.scrollTo(0, 0)');
      const first = await matches.first().boundingBox();
      expect(first!.y + 80).toBeLessThanOrEqual(PHONE.height); // the first match starts above the fold

      const shot = await page.screenshot({ fullPage: true });
      const size = pngSize(shot);
      expect(size.width).toBe(PHONE.width * 2);
      expect(size.height).toBeGreaterThan(PHONE.height);
      const blank = await context.newPage();
      await blank.setContent('<html><body style="margin:0;background:#f4f4f6"></body></html>');
      const empty = await blank.screenshot({ fullPage: true });
      expect(shot.length).toBeGreaterThan(empty.length * 4); // real content, not a blank canvas
    } finally {
      await context.close();
    }
  });
});
