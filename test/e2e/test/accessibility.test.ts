/**
 * The pages users copy, checked with axe-core in real Chromium: the host app's sign-in page and
 * dashboard, and the example site's plain page and CMS article, each once its charts are drawn,
 * served by `pnpm start` as a real child process. Every page must have no violation of axe's
 * default rules (WCAG 2 A and AA, and the best practices on landmarks and headings).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAxe } from './support/axe.ts';
import { launchChromium } from './support/browser.ts';
import { type DemoProcess, demoOnFreePorts, startDemoProcess } from './support/demo-process.ts';
import { readDrawnCharts, waitForCharts } from './support/drawn-charts.ts';

const PASSWORD = 'demo-password';

let dataDir: string;
let demo: DemoProcess;
let browser: Browser;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'analytics-chart-a11y-'));
  demo = await startDemoProcess({
    ...demoOnFreePorts(dataDir),
    DEMO_EVENTS: '5000',
    DEMO_PASSWORD: PASSWORD,
  });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  if (demo) await demo.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** Opens a page in a fresh context, tall enough that every lazy chart on it loads. */
async function opened(url: string): Promise<Page> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport({ width: 1280, height: 2600 });
  await page.goto(url);
  return page;
}

async function expectNoViolation(page: Page): Promise<void> {
  const report = await runAxe(page);
  expect(report.violations).toEqual([]);
  // axe did run: it checked rules, and they passed.
  expect(report.passes).toBeGreaterThan(10);
}

describe('accessibility (axe-core)', () => {
  it('the sign-in page', async () => {
    const page = await opened(`${demo.url}login`);
    expect(await page.$('form[action="/login"]')).not.toBeNull();
    await expectNoViolation(page);
  });

  it('the dashboard, its charts drawn', async () => {
    const page = await opened(`${demo.url}login`);
    await page.type('input[name=login]', 'alice@acme');
    await page.type('input[name=password]', PASSWORD);
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
    expect(new URL(page.url()).pathname).toBe('/dashboard');
    await waitForCharts(page);
    const charts = await readDrawnCharts(page);
    expect(charts.length).toBeGreaterThan(10);
    for (const chart of charts) expect([chart.query, chart.status]).toEqual([chart.query, 'ready']);
    await expectNoViolation(page);
    // The notice the dashboard shows when the session ends, shown as its script shows it.
    await page.evaluate(() => {
      // biome-ignore lint/suspicious/noExplicitAny: the page's document.
      (globalThis as any).document.querySelector('.session-ended').removeAttribute('hidden');
    });
    await expectNoViolation(page);
  });

  it('the plain HTML page', async () => {
    const page = await opened(`${demo.examplesUrl}plain-html/`);
    await waitForCharts(page);
    expect((await readDrawnCharts(page)).map((c) => c.status)).toEqual(['ready', 'ready', 'ready']);
    await expectNoViolation(page);
  });

  it('the CMS article', async () => {
    const page = await opened(`${demo.examplesUrl}cms-embed/`);
    await waitForCharts(page);
    expect((await readDrawnCharts(page)).map((c) => c.status)).toEqual(['ready', 'ready', 'ready']);
    await expectNoViolation(page);
  });
});
