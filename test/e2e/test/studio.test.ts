/**
 * The embed studio's whole flow in real Chromium, as an author meets it: the demo in this
 * process (`startDemo`: the engine in process, the host app with its sign-in, the edge mounted at
 * `/analytics` with the host's studio rule) on loopback ports, a few hundred events ingested
 * through the engine's HTTP API, and an article page on another origin. Sign in, pick a chart,
 * the preview draws, publish, copy the snippet, paste it into the article, it draws; revoke, and
 * the article shows the revoked notice within seconds. Then axe, a keyboard-only pass, and the
 * secret sweep over everything the browser saw.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type RunningDemo, startDemo } from '@analytics-chart/demo';
import { formatSigningKeys, generateSigningKey } from '@analytics-chart/edge';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAxe } from './support/axe.ts';
import { launchChromium } from './support/browser.ts';
import { BrowserTraffic } from './support/browser-traffic.ts';
import { type PageServer, startPageServer } from './support/page-server.ts';

const API_KEY = `canary-${crypto.randomUUID()}-workspace-key`;
const SESSION_SECRET = `session-secret-${crypto.randomUUID()}`;
const SIGNING_KEY = generateSigningKey();
const PASSWORD = 'studio-password';
const DAY = 86_400;
/** Where the studio's screenshot goes (git-ignored), for a person to look at. */
const RESULTS = fileURLToPath(new URL('../test-results', import.meta.url));
/** A label an author might type: quotes and an ampersand, shown as text, never as markup. */
const LABEL = 'Q3 "launch" & friends\u2019 &lt;b&gt;';

let dataDir: string;
let demo: RunningDemo;
let article: PageServer;
let browser: Browser;
const traffic = new BrowserTraffic();
/** Acme's events per day in the fixture (each day a different count, so a wrong tenant shows). */
const acmeTotal = 7 * 4;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'analytics-chart-studio-'));
  demo = await startDemo({
    host: '127.0.0.1',
    port: 0,
    portFallback: false,
    examplesPort: 0,
    examplesPortFallback: false,
    enginePort: 0,
    dataDir,
    apiKey: API_KEY,
    signingKeys: formatSigningKeys([SIGNING_KEY]),
    sessionSecret: SESSION_SECRET,
    demoPassword: PASSWORD,
    idTtl: '10m',
    secureCookies: false,
    logLevel: 'warn',
  });
  const now = Math.floor(Date.now() / 1000);
  for (let day = 0; day < 7; day++) {
    for (const [tenant, count] of [
      ['acme', 4],
      ['globex', 11],
    ] as const) {
      const response = await fetch(`${demo.engineUrl}/api/bulk-log`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          api_key: API_KEY,
          timestamp: now - day * DAY - 3600,
          jsons: Array.from({ length: count }, () => ({ tenant, event: 'page_view' })),
        }),
      });
      expect(response.status).toBe(200);
    }
  }
  article = await startPageServer();
  browser = await launchChromium();
  traffic.attachBrowser(browser);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await article?.close();
  await demo?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** The article page on its own origin, around a pasted snippet. */
function articleHtml(snippet: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Article</title></head><body><main><h1>Our quarter</h1>${snippet}<p>After the chart.</p></main></body></html>`;
}

/** The share of the first chart's canvas that is painted, in a page (0 without a canvas). */
const PAINTED = `(() => {
  const canvas = document.querySelector('analytics-chart')?.shadowRoot?.querySelector('canvas');
  if (!canvas || canvas.width === 0) return 0;
  const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let opaque = 0;
  for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) opaque++;
  return opaque / (pixels.length / 4);
})()`;

/** Waits until the page's first chart is drawn with at least 1% of its canvas painted. */
async function waitForDrawn(page: Page, selector = 'analytics-chart'): Promise<void> {
  await page.waitForFunction(
    `(() => { const el = document.querySelector('${selector}'); return el && el.status === 'ready' && el.mode === 'canvas'; })()`,
    { timeout: 30_000, polling: 100 },
  );
  await page.waitForFunction(`${PAINTED} > 0.01`, { timeout: 10_000, polling: 100 });
}

/** Signs in through the host app's own form, in a fresh context. */
async function signedIn(login: string): Promise<Page> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await traffic.attach(page);
  await page.goto(`${demo.url}login`);
  await page.type('input[name=login]', login);
  await page.type('input[name=password]', PASSWORD);
  await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
  expect(new URL(page.url()).pathname).toBe('/dashboard');
  return page;
}

/**
 * Follows the dashboard's link to the studio and waits until its charts are listed and the
 * preview has drawn.
 */
async function openStudio(page: Page): Promise<void> {
  const [response] = await Promise.all([page.waitForNavigation(), page.click('a.studio-link')]);
  expect(response?.url()).toBe(`${demo.edgeUrl}/studio`);
  expect(response?.status()).toBe(200);
  await page.waitForFunction(`document.querySelectorAll('#chart option').length > 0`, {
    timeout: 10_000,
  });
  await waitForDrawn(page, '#preview analytics-chart');
}

const statusText = (page: Page) => page.$eval('#status', (el) => el.textContent ?? '');

async function waitForStatus(page: Page, pattern: RegExp): Promise<string> {
  await page.waitForFunction(`${pattern}.test(document.getElementById('status').textContent)`, {
    timeout: 10_000,
    polling: 50,
  });
  return statusText(page);
}

describe('the embed studio in Chromium', () => {
  let studio: Page;
  let snippet = '';

  it('signs in, picks a chart, previews it, publishes it and copies the snippet', async () => {
    studio = await signedIn('alice@acme');
    await openStudio(studio);
    expect(await studio.$eval('#subject', (el) => el.textContent)).toBe('alice@acme');
    // The studio offers the host's public charts only, the tenant locked to Alice's.
    const offered = await studio.$$eval('#chart option', (options) =>
      options.map((o) => (o as unknown as { value: string }).value),
    );
    expect(offered).toEqual(['public-events', 'public-signups', 'public-countries']);
    expect(await studio.$eval('#param-0', (el) => (el as unknown as { value: string }).value)).toBe(
      'acme',
    );
    // Viewer options change the live preview in place.
    await studio.select('#theme', 'dark');
    await studio.select('#range', '7d');
    await studio.waitForFunction(
      `(() => { const el = document.querySelector('#preview analytics-chart'); return el.getAttribute('theme') === 'dark' && el.getAttribute('range') === '7d' && el.status === 'ready'; })()`,
    );
    await waitForDrawn(studio, '#preview analytics-chart');

    await studio.type('#label', LABEL);
    await studio.$eval('#refresh', (el) => {
      (el as unknown as { value: string }).value = '1';
    });
    await studio.type('#aud', article.origin);
    await studio.click('#mint');
    await waitForStatus(studio, /^Published/);
    const places = await studio.$$eval('#snippet-list h3', (hs) => hs.map((h) => h.textContent));
    expect(places).toEqual([
      'WordPress (any block editor post)',
      'Custom HTML (WordPress Custom HTML block, other CMSs)',
      'A page with the script',
      'Markdown',
    ]);
    const who = await studio.$$eval('#snippet-list .snippet p', (ps) =>
      ps.map((p) => p.textContent),
    );
    expect(who[0]).toMatch(/Every role/);
    expect(who[1]).toMatch(/unfiltered_html/);

    // Copy through the page's own button, and read the clipboard back.
    await studio
      .browserContext()
      .overridePermissions(new URL(demo.url).origin, ['clipboard-read', 'clipboard-write']);
    const buttons = await studio.$$('#snippet-list button');
    await buttons[2]?.click();
    await waitForStatus(studio, /^Copied the snippet for A page with the script/);
    snippet = (await studio.evaluate('navigator.clipboard.readText()')) as string;
    const shown = await studio.$eval(
      '#snippet-text-2',
      (el) => (el as unknown as { value: string }).value,
    );
    expect(snippet).toBe(shown);
    expect(snippet).toMatch(
      /^<script type="module" src="http:\/\/127\.0\.0\.1:\d+\/analytics\/analytics-chart\.js"><\/script>\n<analytics-chart query-id="[\w.-]+" range="7d" theme="dark" height="300" refresh="1"><\/analytics-chart>$/,
    );

    // The list shows the label as typed, as text.
    await studio.waitForFunction(`document.querySelectorAll('#embeds tbody tr').length === 1`);
    const row = await studio.$$eval('#embeds tbody tr:first-child td', (tds) =>
      tds.map((td) => td.textContent),
    );
    expect(row.slice(0, 3)).toEqual([LABEL, 'Events per day', article.origin]);
    expect(await studio.$$('#embeds tbody b')).toHaveLength(0);
    await mkdir(RESULTS, { recursive: true });
    await studio.screenshot({ path: join(RESULTS, 'studio.png'), fullPage: true });
  });

  it('the pasted snippet draws on another origin, and shows the revoked notice within seconds of a revoke', async () => {
    article.setPage(articleHtml(snippet));
    const reader = await browser.newPage();
    await traffic.attach(reader);
    await reader.goto(`${article.origin}/`);
    await waitForDrawn(reader);
    const drawn = (await reader.evaluate(
      `(() => { const el = document.querySelector('analytics-chart'); return { title: el.payload.title, total: el.payload.series[0].values.reduce((a, b) => a + (b ?? 0), 0) }; })()`,
    )) as { title: string; total: number };
    expect(drawn).toEqual({ title: 'Events per day', total: acmeTotal });

    // The list counts the article's views.
    await studio.reload();
    await studio.waitForFunction(`document.querySelectorAll('#embeds tbody tr').length === 1`);
    const views = Number(
      await studio.$eval('#embeds tbody tr td:nth-child(5)', (td) => td.textContent),
    );
    expect(views).toBeGreaterThan(0);

    const revokedAt = Date.now();
    await studio.click('#embeds tbody button');
    await waitForStatus(studio, /^Revoked/);
    expect(await studio.$eval('#embeds tbody tr td:last-child', (td) => td.textContent)).toMatch(
      /^Revoked /,
    );
    await reader.waitForFunction(
      `(() => { const el = document.querySelector('analytics-chart'); const state = el.shadowRoot.querySelector('[part=state]'); return el.mode === 'error' && state && state.dataset.code === 'invalid'; })()`,
      { timeout: 5_000, polling: 100 },
    );
    const notice = await reader.evaluate(
      `document.querySelector('analytics-chart').shadowRoot.querySelector('[part=message]').textContent`,
    );
    expect(notice).toMatch(/not valid/);
    expect(Date.now() - revokedAt).toBeLessThan(5_000);
    await reader.close();
  });

  it('is axe-clean with its snippets and list shown', async () => {
    const report = await runAxe(studio);
    expect(report.violations).toEqual([]);
    expect(report.passes).toBeGreaterThan(10);
  });

  it('works by keyboard alone: focus order, publish, copy and revoke', async () => {
    const page = await signedIn('bob@globex');
    await openStudio(page);
    const focused = () =>
      page.evaluate(`(() => { const el = document.activeElement; return el.id || el.tagName; })()`);
    const order: unknown[] = [];
    await page.focus('#chart');
    for (let i = 0; i < 16; i++) {
      order.push(await focused());
      await page.keyboard.press('Tab');
    }
    // The preview's chart takes focus between the options and the publish form (its points can
    // be explored by keyboard); every control is reached in reading order.
    const preview = order.filter((id) => id === 'ANALYTICS-CHART').length;
    expect(preview).toBeGreaterThan(0);
    expect(order.slice(0, 11 + preview)).toEqual([
      'chart',
      'param-0',
      'theme',
      'height',
      'range',
      'locale',
      'refresh',
      ...Array(preview).fill('ANALYTICS-CHART'),
      'label',
      'ttl',
      'aud',
      'mint',
    ]);
    // Pick the second chart with the arrow key, then publish it with Enter.
    await page.focus('#chart');
    await page.keyboard.press('ArrowDown');
    expect(await page.$eval('#chart', (el) => (el as unknown as { value: string }).value)).toBe(
      'public-signups',
    );
    await page.focus('#label');
    await page.keyboard.type('Keyboard embed');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('mint');
    await page.keyboard.press('Enter');
    await waitForStatus(page, /^Published “Keyboard embed”/);
    // Focus moved to the snippets, whose first control is the first snippet's text.
    expect(await focused()).toBe('snippets-heading');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('snippet-text-0');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space');
    await waitForStatus(page, /^Copied the snippet for WordPress/);
    // On to the list's Revoke button, by Tab only.
    for (let i = 0; i < 40; i++) {
      const label = await page.evaluate(`document.activeElement.getAttribute('aria-label')`);
      if (label === 'Revoke Keyboard embed') break;
      await page.keyboard.press('Tab');
    }
    await page.keyboard.press('Enter');
    await waitForStatus(page, /^Revoked “Keyboard embed”/);
    expect(await focused()).toBe('embeds-heading');
    // Bob's list holds his embed only: nothing of Alice's.
    const labels = await page.$$eval('#embeds tbody tr td:first-child', (tds) =>
      tds.map((td) => td.textContent),
    );
    expect(labels).toEqual(['Keyboard embed']);
  });

  it('shows the browser no secret, and the studio page broke no CSP rule', async () => {
    await traffic.settle();
    const secrets = [API_KEY, SESSION_SECRET, SIGNING_KEY.secret];
    for (const secret of [...secrets]) secrets.push(Buffer.from(secret).toString('base64'));
    // The control: the sweep did see the studio's traffic.
    expect(traffic.find(['/api/studio/embeds']).length).toBeGreaterThan(0);
    expect(traffic.find(secrets).map((item) => item.where)).toEqual([]);
    expect(traffic.cspViolations).toEqual([]);
    expect(traffic.consoleErrors.filter((e) => !/status of 401/.test(e.text))).toEqual([]);
  });
});
