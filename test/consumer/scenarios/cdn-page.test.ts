/**
 * A page that never saw this repository: plain HTML on its own origin loading the element's
 * one-file bundle from a versioned CDN URL (a local server with jsDelivr's path pattern, the file
 * taken from the installed tarball), drawing a chart with an id a Python host minted with PyJWT
 * for the standalone edge; and an id a Go host minted with the documented Go file, answered too.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'puppeteer-core';
import puppeteer from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CHROME_PATH, CHROMIUM_ARGS } from '../../../scripts/chromium.mjs';
import { startEdgeService } from '../harness/edge-service.ts';
import { countSignups } from '../harness/events.ts';
import { goMintedId } from '../harness/go.ts';
import { type Payload, payloadTotal } from '../harness/payload.ts';
import { pythonMintedId } from '../harness/python.ts';
import { readmeBlock } from '../harness/readme.ts';
import { fixturePath, installed } from '../harness/scratch.ts';
import { staticServer } from '../harness/static-server.ts';

const { signingKeys, events } = inject('consumer');
const closers: (() => Promise<unknown>)[] = [];
let edgeUrl = '';
let id = '';
let dir = '';

beforeAll(async () => {
  dir = await installed('edge-service');
  const edge = await startEdgeService(dir);
  closers.push(() => edge.process.stop());
  edgeUrl = edge.url;
  const minted = await pythonMintedId('signups-all-tenants', signingKeys);
  id = minted;
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

describe('a Python-minted id', () => {
  it('is a compact HS256 JWT the edge answers with every tenant signups', async () => {
    const header = JSON.parse(Buffer.from(id.split('.')[0] ?? '', 'base64url').toString());
    expect(header).toMatchObject({ alg: 'HS256', kid: signingKeys.split(':')[0] });
    const data = await fetch(`${edgeUrl}/api/data`, { headers: { authorization: `Bearer ${id}` } });
    expect(data.status).toBe(200);
    expect(payloadTotal((await data.json()) as Payload)).toBe(countSignups(events));
  });
});

describe('a Go-minted id', () => {
  it('is a compact HS256 JWT the edge answers with every tenant signups', async () => {
    const minted = await goMintedId('signups-all-tenants', signingKeys);
    const header = JSON.parse(Buffer.from(minted.split('.')[0] ?? '', 'base64url').toString());
    expect(header).toMatchObject({ alg: 'HS256', kid: signingKeys.split(':')[0] });
    const data = await fetch(`${edgeUrl}/api/data`, {
      headers: { authorization: `Bearer ${minted}` },
    });
    expect(data.status).toBe(200);
    expect(payloadTotal((await data.json()) as Payload)).toBe(countSignups(events));
  });
});

describe('the element from a versioned CDN URL on a plain page', () => {
  let browser: Browser | undefined;
  afterAll(async () => {
    await browser?.close();
  });

  it('draws the chart: the canvas has pixels', async () => {
    const element = join(dir, 'node_modules/@analytics-chart/element');
    const { version } = JSON.parse(readFileSync(join(element, 'package.json'), 'utf8')) as {
      version: string;
    };
    const cdnPath = `/npm/@analytics-chart/element@${version}/dist/analytics-chart.js`;
    const cdn = await staticServer({
      [cdnPath]: { file: join(element, 'dist/analytics-chart.js'), type: 'text/javascript' },
    });
    closers.push(cdn.close);

    // The page as an author copies it from the element README, pointed at this CDN, this edge
    // and this id.
    const html = readFileSync(fixturePath('cdn-page/index.html'), 'utf8');
    expect(html).toBe(readmeBlock('element', 'cdn-page/index.html'));
    expect(html).toContain(`https://cdn.jsdelivr.net${cdnPath}`);
    const page = html
      .replace('https://cdn.jsdelivr.net', cdn.origin)
      .replace('https://app.example.com/analytics/', `${edgeUrl}/`)
      .replace('PASTE-AN-ID', id);
    const site = await staticServer({ '/': { text: page, type: 'text/html' } }, 'localhost');
    closers.push(site.close);
    expect(new Set([new URL(site.origin).origin, cdn.origin, new URL(edgeUrl).origin]).size).toBe(
      3,
    );

    browser = await puppeteer.launch({
      executablePath: CHROME_PATH,
      headless: true,
      args: [...CHROMIUM_ARGS],
    });
    const tab = await browser.newPage();
    const failures: string[] = [];
    // Everything the page loads must succeed (the browser's own favicon probe aside).
    tab.on('requestfailed', (r) => failures.push(r.url()));
    tab.on('response', (r) => {
      if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) {
        failures.push(`${r.status()} ${r.url()}`);
      }
    });
    await tab.goto(`${site.origin}/`);
    const inked = await tab.waitForFunction(
      () => {
        const canvas = document
          .querySelector('analytics-chart')
          ?.shadowRoot?.querySelector('canvas');
        if (!canvas || canvas.width === 0 || canvas.height === 0) return 0;
        const pixels = canvas
          .getContext('2d')
          ?.getImageData(0, 0, canvas.width, canvas.height).data;
        let n = 0;
        for (let i = 3; i < (pixels?.length ?? 0); i += 4) if (pixels?.[i]) n++;
        return n > 500 ? n : 0;
      },
      { timeout: 60_000, polling: 250 },
    );
    expect(await inked.jsonValue()).toBeGreaterThan(500);
    expect(failures).toEqual([]);
  });
});
