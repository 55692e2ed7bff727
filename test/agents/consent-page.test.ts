import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentsHarness, agentsHarness, type DocumentServer, startDocumentServer } from './support.ts';

const PHONE = { width: 390, height: 844 };
/** A phone-width page without scripts: the consent page must work as plain HTML. */
const phoneContext = () =>
  browser.newContext({ viewport: PHONE, deviceScaleFactor: 2, javaScriptEnabled: false });

/** Width and height from a PNG's IHDR chunk. */
function pngSize(png: Buffer) {
  expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

let h: AgentsHarness;
let browser: Browser;
let authorizeUrl: string;
let clientApp: Server;
let redirect: string;

beforeAll(async () => {
  h = await agentsHarness();
  // The client's own callback: a real local server the browser is sent back to.
  clientApp = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' }).end('<p>back at the client</p>');
  });
  await new Promise<void>((resolve) => clientApp.listen(0, '127.0.0.1', resolve));
  redirect = `http://127.0.0.1:${(clientApp.address() as AddressInfo).port}/callback`;
  const registered = await fetch(`${h.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Claude Desktop on a rather long device name',
      redirect_uris: [redirect],
      token_endpoint_auth_method: 'none',
    }),
  });
  const { client_id } = (await registered.json()) as { client_id: string };
  const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
  authorizeUrl = `${h.url}/oauth/authorize?${new URLSearchParams({
    response_type: 'code',
    client_id,
    redirect_uri: redirect,
    scope: 'mcp:read mcp:write',
    state: 'phone',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: h.mcpUrl,
  })}`;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  clientApp?.close();
  await h?.close();
});

describe('the consent page in Chromium at phone width', () => {
  it('shows the client, redirect host and scopes within 390 px, and approving returns a code to the client', async () => {
    const context = await phoneContext();
    try {
      const page = await context.newPage();
      const response = await page.goto(authorizeUrl);
      expect(response?.status()).toBe(200);
      await expect(page.locator('h1').textContent()).resolves.toBe(
        'Claude Desktop on a rather long device name wants to use earshot',
      );
      await expect(page.locator('#redirect-host').textContent()).resolves.toBe(new URL(redirect).host);
      await expect(page.locator('#scopes li').allTextContents()).resolves.toEqual([
        'mcp:read: Read podcasts, episodes, transcripts, ads and your alerts',
        'mcp:write: Create alerts in the project',
      ]);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
        PHONE.width,
      );
      for (const part of ['h1', '#api_key', 'button.approve', 'button[value=deny]']) {
        const box = await page.locator(part).boundingBox();
        expect(box, part).not.toBeNull();
        expect(box!.x).toBeGreaterThanOrEqual(0);
        expect(box!.x + box!.width).toBeLessThanOrEqual(PHONE.width);
        expect(box!.y + box!.height, `${part} above the fold`).toBeLessThanOrEqual(PHONE.height);
      }
      for (const button of ['button.approve', 'button[value=deny]'])
        expect((await page.locator(button).boundingBox())!.height).toBeGreaterThanOrEqual(44); // a thumb's target

      const shot = await page.screenshot({ fullPage: true });
      const dir = join(tmpdir(), 'earshot-screenshots');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'consent-phone.png'), shot);
      expect(pngSize(shot).width).toBe(PHONE.width * 2);
      const blank = await context.newPage();
      await blank.setContent('<html><body style="margin:0;background:#f4f4f6"></body></html>');
      expect(shot.length).toBeGreaterThan((await blank.screenshot()).length * 4); // real content

      await page.fill('#api_key', h.tenant.key);
      await Promise.all([
        page.waitForURL((url) => url.href.startsWith(redirect)),
        page.click('button.approve'),
      ]);
      const back = new URL(page.url());
      expect(back.searchParams.get('code')).toMatch(/^[\w-]{43}$/);
      expect(back.searchParams.get('state')).toBe('phone');
      expect(back.searchParams.get('iss')).toBe(h.url);
    } finally {
      await context.close();
    }
  });
});

describe('the consent page of a client metadata document client', () => {
  let hm: AgentsHarness;
  let docs: DocumentServer;
  beforeAll(async () => {
    docs = await startDocumentServer();
    hm = await agentsHarness({ EARSHOT_OAUTH_CLIENT_METADATA_ALLOW_CIDRS: '127.0.0.1/32' }, undefined, {
      clientMetadata: { ca: docs.tls.ca },
    });
  }, 60_000);
  afterAll(async () => {
    await hm?.close();
    await docs?.close();
  });

  it('is headed by the document host, shows the name as a claim, and still fits 390 px', async () => {
    const clientId = docs.serve('/oauth/client-metadata.json', {
      client_name: 'Claude Desktop on a rather long device name',
      redirect_uris: [redirect],
      token_endpoint_auth_method: 'none',
    });
    const url = `${hm.url}/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirect,
      scope: 'mcp:read mcp:write',
      state: 'phone',
      code_challenge: createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url'),
      code_challenge_method: 'S256',
      resource: hm.mcpUrl,
    })}`;
    const context = await phoneContext();
    try {
      const page = await context.newPage();
      expect((await page.goto(url))?.status()).toBe(200);
      const host = new URL(clientId).host;
      await expect(page.locator('h1').textContent()).resolves.toBe(
        `An application from ${host} wants to use earshot`,
      );
      await expect(page.locator('#client-claim').textContent()).resolves.toContain(
        'It calls itself Claude Desktop on a rather long device name. Only its address is verified',
      );
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
        PHONE.width,
      );
      // A loopback return address: anyone can present this client_id with one (MCP authorization,
      // Localhost Redirect URI Risks), so the page says so, and still fits.
      await expect(page.locator('#device-warning').textContent()).resolves.toContain(
        'any program could give this address',
      );
      for (const part of [
        'h1',
        '#client-claim',
        '#device-warning',
        '#api_key',
        'button.approve',
        'button[value=deny]',
      ]) {
        const box = await page.locator(part).boundingBox();
        expect(box!.x + box!.width).toBeLessThanOrEqual(PHONE.width);
        expect(box!.y + box!.height, `${part} above the fold`).toBeLessThanOrEqual(PHONE.height);
      }
      writeFileSync(
        join(tmpdir(), 'earshot-screenshots', 'consent-metadata-document-phone.png'),
        await page.screenshot({ fullPage: true }),
      );
      await page.fill('#api_key', hm.tenant.key);
      await Promise.all([
        page.waitForURL((next) => next.href.startsWith(redirect)),
        page.click('button.approve'),
      ]);
      expect(new URL(page.url()).searchParams.get('code')).toMatch(/^[\w-]{43}$/);
    } finally {
      await context.close();
    }
  });
});
