/**
 * The whole system, as its users meet it: `node scripts/start.mjs` (what `pnpm start` runs) as a
 * real child process on 127.0.0.1 with a small demo workspace in a temporary directory, driven in
 * real Chromium. Every number a chart shows is checked against the same query sent straight to
 * the engine's HTTP API (its envelope read by the test's own code), and everything the browser
 * sees is searched for the workspace key and the other secrets.
 */
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatSigningKeys, generateSigningKey, type QueryDefinition } from '@analytics-chart/edge';
import { SESSION_QUERIES as WORKER_SESSION_QUERIES } from '@analytics-chart/example-cloudflare-worker/queries';
import {
  DASHBOARD_LAYOUT,
  DASHBOARD_RANGES,
  DASHBOARD_TIME_ZONE,
  DEFAULT_DASHBOARD_RANGE,
  EDGE_QUERIES,
} from '@analytics-chart/example-host-app';
import { type LocalWorker, runUnderWorkerd } from '@analytics-chart/test-kit/workerd';
import type { Browser, BrowserContext, HTTPResponse, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './support/browser.ts';
import { BrowserTraffic } from './support/browser-traffic.ts';
import { expectDrawnToMatch } from './support/compare-drawing.ts';
import { type DemoProcess, demoOnFreePorts, startDemoProcess } from './support/demo-process.ts';
import { type DrawnChart, readDrawnCharts, waitForCharts } from './support/drawn-charts.ts';
import { engineRequest, expectedDrawing } from './support/expected-charts.ts';
import type { PageDocument } from './support/page-dom.ts';
import { type PageServer, startPageServer } from './support/page-server.ts';

declare const document: PageDocument;
declare const window: { pageMarker?: string };

/** The workspace key: a canary that must never reach the browser in any form. */
const API_KEY = `canary-${crypto.randomUUID()}-workspace-key`;
const SESSION_SECRET = `session-secret-${crypto.randomUUID()}`;
const SIGNING_KEYS = formatSigningKeys([generateSigningKey()]);
const WORKER_SIGNING_KEYS = formatSigningKeys([generateSigningKey()]);
/** Dashboard ids live this long, so the suite can watch them expire and be renewed. */
const ID_TTL_SECONDS = 6;
const PASSWORD = 'demo-password';

const E2E_DIR = fileURLToPath(new URL('../', import.meta.url));
/** The Worker example's folder, run as `wrangler dev` would run it. */
const WORKER_PROJECT = dirname(
  createRequire(import.meta.url).resolve('@analytics-chart/example-cloudflare-worker/package.json'),
);
const SCREENSHOT = join(E2E_DIR, 'test-results', 'dashboard.png');
const DOCS_SCREENSHOT = fileURLToPath(new URL('../../../docs/dashboard.png', import.meta.url));

let dataDir: string;
let demo: DemoProcess;
let browser: Browser;
const traffic = new BrowserTraffic();
let alice: BrowserContext;
let alicePage: Page;
/** An id the browser certainly saw: the positive control of the secret search. */
let seenId = '';

function claimsOf(id: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(id.split('.')[1] ?? '', 'base64url').toString('utf8'));
}

function secretForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  return [
    secret,
    bytes.toString('base64'),
    bytes.toString('base64url'),
    encodeURIComponent(secret),
  ];
}

/** Sends a request body straight to the engine's HTTP API and returns its envelope. */
async function askEngine(body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const response = await fetch(`${demo.engineUrl}/api/visualize/data`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const envelope = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(envelope)).toBe(200);
  return envelope;
}

/** The registry name of the query a signed id names. */
function queryOf(chart: DrawnChart): string {
  return String(claimsOf(chart.queryId ?? '').q);
}

/**
 * Checks every chart against the engine: the same definition, parameters and range, over the
 * exact window the chart reports, answered by the engine and read by the test's own code.
 */
async function expectChartsMatchEngine(
  charts: DrawnChart[],
  params: Record<string, string>,
  rangeKey: (definition: QueryDefinition) => string | undefined,
  registry: Readonly<Record<string, QueryDefinition>> = EDGE_QUERIES,
): Promise<void> {
  for (const chart of charts) {
    const name = queryOf(chart);
    const definition = registry[name];
    expect(definition, `query ${name} is in the registry`).toBeDefined();
    if (!definition) continue;
    const key = rangeKey(definition);
    const body = engineRequest(definition, params, API_KEY, {
      range: key === undefined ? undefined : definition.ranges?.[key],
      window: chart.window,
    });
    expectDrawnToMatch(
      chart,
      expectedDrawing(definition, await askEngine(body)),
      DASHBOARD_TIME_ZONE,
    );
  }
}

async function signIn(context: BrowserContext, login: string): Promise<Page> {
  const page = await context.newPage();
  await traffic.attach(page);
  await page.setViewport({ width: 1280, height: 2600 });
  await page.goto(`${demo.url}login`);
  await page.type('input[name=login]', login);
  await page.type('input[name=password]', PASSWORD);
  await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
  expect(new URL(page.url()).pathname).toBe('/dashboard');
  return page;
}

/** Mints a fresh id for the page's signed-in viewer through the edge's sign route. */
async function signInPage(page: Page, query: string): Promise<string> {
  const id = await page.evaluate(async (name) => {
    const r = await fetch('/analytics/api/sign', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: name }),
    });
    return ((await r.json()) as { id: string }).id;
  }, query);
  expect(claimsOf(id)).toMatchObject({ q: query, sub: 'alice@acme', p: { tenant: 'acme' } });
  return id;
}

/** Adds a chart with the given id to the page and resolves with its error event's detail. */
function chartErrorFor(page: Page, queryId: string): Promise<{ status: number; code: string }> {
  return page.evaluate(
    (id) =>
      new Promise<{ status: number; code: string }>((resolve, reject) => {
        const el = document.createElement('analytics-chart');
        el.setAttribute('query-id', id);
        el.setAttribute('lazy', 'false');
        el.addEventListener('analytics-chart-error', (event) => {
          const { status, code } = event.detail as { status: number; code: string };
          resolve({ status, code });
        });
        el.addEventListener('analytics-chart-load', () => reject(new Error('the chart drew')));
        document.body.prepend(el);
      }),
    queryId,
  );
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'analytics-chart-e2e-'));
  demo = await startDemoProcess({
    ...demoOnFreePorts(dataDir),
    // Enough that even the rarest event (errors, 3 %) shows up in every tenant's last 24 hours.
    DEMO_EVENTS: '60000',
    ANALYTICS_API_KEY: API_KEY,
    SESSION_SECRET,
    EDGE_SIGNING_KEYS: SIGNING_KEYS,
    EDGE_SESSION_ID_TTL: `${ID_TTL_SECONDS}s`,
    DEMO_PASSWORD: PASSWORD,
  });
  browser = await launchChromium();
  traffic.attachBrowser(browser);
  alice = await browser.createBrowserContext();
});

afterAll(async () => {
  await browser?.close();
  if (demo) await demo.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('pnpm start', () => {
  it('made no secrets on disk when the environment gave them, and printed one URL and the logins', () => {
    const out = demo.output();
    expect(out).toContain(`analytics-chart demo  ▸  ${demo.url}`);
    expect(out).toContain('Sign in as alice@acme or bob@globex');
    expect(out).toContain(
      'Using ANALYTICS_API_KEY, SESSION_SECRET, EDGE_SIGNING_KEYS from the environment.',
    );
    expect(out).not.toContain('Created development secrets');
    expect(out).toContain('Generating the demo workspace: 60,000 events');
    expect(existsSync(join(dataDir, 'engine', 'default.duckdb'))).toBe(true);
    for (const file of ['analytics-api-key', 'session-secret', 'edge-signing-keys']) {
      expect(existsSync(join(dataDir, file))).toBe(false);
    }
    for (const form of secretForms(API_KEY)) expect(out).not.toContain(form);
  });
});

describe('the host app in Chromium', () => {
  let drawn: DrawnChart[];

  it('signs alice@acme in; every chart on the dashboard draws and equals the engine', async () => {
    alicePage = await signIn(alice, 'alice@acme');
    await waitForCharts(alicePage);
    drawn = await readDrawnCharts(alicePage);
    expect(drawn).toHaveLength(DASHBOARD_LAYOUT.length);
    seenId = drawn[0]?.queryId ?? '';
    for (const chart of drawn) {
      expect([chart.query, chart.status, chart.mode]).toEqual([
        chart.query,
        'ready',
        expect.stringMatching(/canvas|value|table/),
      ]);
      expect(claimsOf(chart.queryId ?? '')).toMatchObject({
        sub: 'alice@acme',
        p: { tenant: 'acme' },
      });
    }
    const graphs = new Set(drawn.map((c) => c.graph));
    expect(graphs.size).toBeGreaterThanOrEqual(8);
    for (const graph of [
      'Single Value',
      'Multi Line',
      'Ratio Line',
      'Table',
      'Pie Chart',
      'Samples',
    ]) {
      expect(graphs).toContain(graph);
    }
    await expectChartsMatchEngine(drawn, { tenant: 'acme' }, (d) =>
      d.ranges ? DEFAULT_DASHBOARD_RANGE : undefined,
    );
    // Samples show the allowlisted fields only: no user id or other field reached the page.
    await traffic.settle();
    const dataAnswers = traffic.items.filter(
      (i) => i.where.startsWith('response 200') && i.where.includes('/api/data'),
    );
    expect(dataAnswers.length).toBeGreaterThanOrEqual(DASHBOARD_LAYOUT.length);
    expect(dataAnswers.filter((i) => /"user_id"|session_ms|"u_\d+"/.test(i.text))).toEqual([]);

    mkdirSync(join(E2E_DIR, 'test-results'), { recursive: true });
    // The README's picture: the page at its own height (the tall viewport only keeps every
    // chart in view so lazy loading starts at once).
    await alicePage.setViewport({ width: 1280, height: 900 });
    await alicePage.screenshot({ path: SCREENSHOT, fullPage: true });
    await alicePage.setViewport({ width: 1280, height: 2600 });
    if (process.env.UPDATE_DOCS_SCREENSHOT === '1' || !existsSync(DOCS_SCREENSHOT)) {
      mkdirSync(join(DOCS_SCREENSHOT, '..'), { recursive: true });
      copyFileSync(SCREENSHOT, DOCS_SCREENSHOT);
    }
    await traffic.recordSource(alicePage);
  });

  it('refuses an edited id: another tenant written into a valid id, or a changed signature', async () => {
    const id = await signInPage(alicePage, 'kpi-events');
    const [header, payload, signature] = id.split('.');
    const claims = claimsOf(id);
    const otherTenant = Buffer.from(
      JSON.stringify({ ...claims, p: { tenant: 'globex' } }),
    ).toString('base64url');
    expect(await chartErrorFor(alicePage, `${header}.${otherTenant}.${signature}`)).toEqual({
      status: 401,
      code: 'invalid',
    });
    const flipped = `${signature?.slice(0, -2)}${signature?.endsWith('AA') ? 'BB' : 'AA'}`;
    expect(await chartErrorFor(alicePage, `${header}.${payload}.${flipped}`)).toEqual({
      status: 401,
      code: 'invalid',
    });
  });

  it('refuses an acme id replayed in a globex session, for data and for renewal', async () => {
    const aliceId = await signInPage(alicePage, 'kpi-revenue');
    const bob = await browser.createBrowserContext();
    try {
      const bobPage = await signIn(bob, 'bob@globex');
      await waitForCharts(bobPage);
      const bobCharts = await readDrawnCharts(bobPage);
      expect(bobCharts.every((c) => claimsOf(c.queryId ?? '').p !== undefined)).toBe(true);
      expect(
        bobCharts.map((c) => (claimsOf(c.queryId ?? '').p as { tenant: string }).tenant),
      ).toEqual(bobCharts.map(() => 'globex'));
      expect(await chartErrorFor(bobPage, aliceId)).toEqual({ status: 403, code: 'forbidden' });
      const renewal = await bobPage.evaluate(async (id) => {
        const r = await fetch('/analytics/api/renew', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ id }),
        });
        await r.text();
        return r.status;
      }, aliceId);
      expect(renewal).toBe(403);
      await traffic.recordSource(bobPage);
      await traffic.settle();
    } finally {
      await bob.close();
    }
  });

  it('renews expired ids without a reload when the viewer picks another range', async () => {
    const before = await readDrawnCharts(alicePage);
    const ranged = before.filter((c) => EDGE_QUERIES[queryOf(c)]?.ranges);
    expect(ranged.length).toBeGreaterThanOrEqual(8);
    const expiry = Math.max(...ranged.map((c) => Number(claimsOf(c.queryId ?? '').exp)));
    await alicePage.evaluate(() => {
      window.pageMarker = 'not reloaded';
    });
    const wait = expiry * 1000 + 1500 - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));

    const renewals: HTTPResponse[] = [];
    const expired: HTTPResponse[] = [];
    const onResponse = (response: HTTPResponse) => {
      if (response.url().endsWith('/analytics/api/renew')) renewals.push(response);
      if (response.url().includes('/analytics/api/data') && response.status() === 401) {
        expired.push(response);
      }
    };
    alicePage.on('response', onResponse);
    await alicePage.select('select[name=range]', '24h');
    // Every chart that takes ranges shows a 24-hour window again (the others keep theirs).
    await alicePage.waitForFunction(
      () =>
        [...document.querySelectorAll('analytics-chart[range]')].every((el) => {
          const chart = el as unknown as {
            status: string;
            payload?: { range?: { start: number; end: number } };
          };
          const range = chart.payload?.range;
          // 24 hours, give or take the second the edge rounds the end up to.
          return (
            chart.status === 'ready' &&
            range !== undefined &&
            range.end - range.start >= 86_400 &&
            range.end - range.start <= 86_401
          );
        }),
      { timeout: 60_000, polling: 100 },
    );
    alicePage.off('response', onResponse);

    expect(await alicePage.evaluate(() => window.pageMarker)).toBe('not reloaded');
    expect(new URL(alicePage.url()).searchParams.get('range')).toBe('24h');
    expect(expired.length).toBeGreaterThanOrEqual(ranged.length);
    expect(renewals.filter((r) => r.status() === 200).length).toBeGreaterThanOrEqual(ranged.length);
    const after = await readDrawnCharts(alicePage);
    const afterRanged = after.filter((c) => EDGE_QUERIES[queryOf(c)]?.ranges);
    for (const chart of afterRanged) {
      const old = ranged.find((c) => c.query === chart.query);
      expect(chart.queryId, `${chart.query} got a fresh id`).not.toBe(old?.queryId);
      const claims = claimsOf(chart.queryId ?? '');
      expect(claims).toMatchObject({ q: chart.query, sub: 'alice@acme', p: { tenant: 'acme' } });
      expect(Number(claims.exp)).toBeGreaterThan(expiry);
    }
    await expectChartsMatchEngine(afterRanged, { tenant: 'acme' }, (d) =>
      d.ranges ? '24h' : undefined,
    );
    expect(DASHBOARD_RANGES['24h']?.granularity).toBe('Hour');
    await traffic.recordSource(alicePage);
  });

  it("opens the embed studio in alice's session; its page and API join the secret search", async () => {
    const page = await alicePage.browserContext().newPage();
    await traffic.attach(page);
    const answer = await page.goto(`${demo.edgeUrl}/studio`);
    expect(answer?.status()).toBe(200);
    // The preview draws with an id minted by the studio API for this session.
    await page.waitForFunction(
      `(() => { const el = document.querySelector('#preview analytics-chart'); return el && el.status === 'ready'; })()`,
      { timeout: 30_000, polling: 100 },
    );
    expect(await page.$eval('#subject', (el) => el.textContent)).toBe('alice@acme');
    await traffic.recordSource(page);
    await page.close();
  });
});

describe('example pages with public ids', () => {
  it('draws the plain HTML page and the CMS article with no session at all', async () => {
    const anonymous = await browser.createBrowserContext();
    let articleChart: DrawnChart | undefined;
    try {
      for (const path of ['plain-html/', 'cms-embed/']) {
        const page = await anonymous.newPage();
        await traffic.attach(page);
        await page.setViewport({ width: 1280, height: 1600 });
        const dataRequests: Record<string, string>[] = [];
        const dataAnswers: Record<string, string>[] = [];
        page.on('request', (request) => {
          if (request.url().includes('/api/data') && request.method() === 'GET') {
            dataRequests.push(request.headers());
          }
        });
        page.on('response', (response) => {
          const request = response.request();
          if (request.url().includes('/api/data') && request.method() === 'GET') {
            dataAnswers.push(response.headers());
          }
        });
        await page.goto(`${demo.examplesUrl}${path}`);
        await waitForCharts(page);
        const charts = await readDrawnCharts(page);
        expect(charts.length).toBeGreaterThanOrEqual(3);
        for (const chart of charts) {
          expect(claimsOf(chart.queryId ?? '')).toMatchObject({
            pub: true,
            aud: new URL(demo.examplesUrl).origin,
            p: { tenant: 'acme' },
          });
        }
        await expectChartsMatchEngine(charts, { tenant: 'acme' }, (d) =>
          d.ranges ? (d.defaultRange ?? Object.keys(d.ranges)[0]) : undefined,
        );
        if (path === 'cms-embed/') articleChart = charts[0];
        // Cross-origin reads without credentials: no cookie went out, CORS '*' came back.
        expect(dataRequests.length).toBeGreaterThanOrEqual(charts.length);
        for (const headers of dataRequests) expect(headers.cookie).toBeUndefined();
        expect(dataAnswers.length).toBeGreaterThanOrEqual(charts.length);
        for (const headers of dataAnswers) expect(headers['access-control-allow-origin']).toBe('*');
        await traffic.recordSource(page);
      }
      // The article's first id as an embed page (what its iframe snippet and oEmbed show): the
      // same numbers, and its traffic joins the secret search below.
      const embed = await anonymous.newPage();
      await traffic.attach(embed);
      const answer = await embed.goto(`${demo.edgeUrl}/embed/${articleChart?.queryId}`);
      expect(answer?.status()).toBe(200);
      await waitForCharts(embed);
      const [embedded] = await readDrawnCharts(embed);
      expect(embedded?.queryId).toBe(articleChart?.queryId);
      if (embedded && articleChart) {
        await expectChartsMatchEngine(
          [{ ...embedded, query: articleChart.query }],
          { tenant: 'acme' },
          (d) => (d.ranges ? (d.defaultRange ?? Object.keys(d.ranges)[0]) : undefined),
        );
      }
      await traffic.recordSource(embed);
      // The demo configures the edge's public URL, so oEmbed answers for its embed pages.
      const embedUrl = `${demo.edgeUrl}/embed/${articleChart?.queryId}`;
      const oembed = await fetch(`${demo.edgeUrl}/oembed?url=${encodeURIComponent(embedUrl)}`);
      expect(oembed.status).toBe(200);
      const card = (await oembed.json()) as { type?: string; html?: string };
      expect(card.type).toBe('rich');
      expect(card.html).toContain(`src="${embedUrl}`);
      expect(await anonymous.cookies()).toEqual([]);
    } finally {
      await anonymous.close();
    }
  });
});

describe('the edge as a Cloudflare Worker under workerd', () => {
  let worker: LocalWorker;
  let site: PageServer;

  beforeAll(async () => {
    site = await startPageServer();
    worker = await runUnderWorkerd(WORKER_PROJECT, {
      ANALYTICS_BASE_URL: demo.engineUrl,
      ANALYTICS_API_KEY: API_KEY,
      EDGE_SIGNING_KEYS: WORKER_SIGNING_KEYS,
      SESSION_SECRET,
      EDGE_ALLOWED_ORIGINS: `${site.origin},*`,
    });
  });

  afterAll(async () => {
    await worker?.close();
    await site?.close();
  });

  it("serves its session charts to a page on another origin, with the host's session", async () => {
    const session = (await alice.cookies()).find((c) => c.name === 'session');
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe('Lax');
    const edge = `${worker.origin}/analytics`;
    // The host's server mints ids through the Worker's sign route with the viewer's session.
    const elements: string[] = [];
    for (const [name, definition] of Object.entries(WORKER_SESSION_QUERIES)) {
      const response = await fetch(`${edge}/api/sign`, {
        method: 'POST',
        headers: { authorization: `Bearer ${session?.value}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: name }),
      });
      expect(response.status).toBe(200);
      const { id } = (await response.json()) as { id: string };
      const range = definition.defaultRange ? ` range="${definition.defaultRange}"` : '';
      elements.push(
        `<analytics-chart data-query="${name}" query-id="${id}"${range} credentials="include" lazy="false" locale="en-US"></analytics-chart>`,
      );
    }
    site.setPage(`<!doctype html><html lang="en"><head><meta charset="utf-8">
      <script type="module" src="${edge}/analytics-chart.js"></script></head>
      <body>${elements.join('\n')}</body></html>`);
    const page = await alice.newPage();
    await traffic.attach(page);
    await page.setViewport({ width: 1280, height: 900 });
    await page.goto(`${site.origin}/`);
    await waitForCharts(page);
    const charts = await readDrawnCharts(page);
    expect(charts).toHaveLength(Object.keys(WORKER_SESSION_QUERIES).length);
    for (const chart of charts) expect([chart.query, chart.status]).toEqual([chart.query, 'ready']);
    await expectChartsMatchEngine(
      charts,
      { tenant: 'acme' },
      (d) => d.defaultRange,
      WORKER_SESSION_QUERIES,
    );
    await traffic.recordSource(page);
    for (const line of worker.logs) expect(line).not.toContain(API_KEY);
  });
});

describe('what the browser saw', () => {
  it('holds no workspace key, session secret or signing key anywhere', async () => {
    await traffic.settle();
    // Every response body was read, so every one was searched.
    expect([...traffic.unread]).toEqual([]);
    expect(traffic.unreadable).toEqual([]);
    expect(traffic.items.length).toBeGreaterThan(200);
    // The search does find what the browser saw: the dashboard's first id is in the page, the
    // Authorization headers and the renewal bodies.
    expect(seenId).not.toBe('');
    expect(traffic.find([seenId]).length).toBeGreaterThan(2);
    const responses = traffic.items.filter((i) => i.where.startsWith('response'));
    expect(responses.some((i) => i.where.includes('/analytics/analytics-chart'))).toBe(true);
    const secrets = [
      ...secretForms(API_KEY),
      ...secretForms(SESSION_SECRET),
      ...SIGNING_KEYS.split(',').flatMap((k) => secretForms(k.split(':')[1] ?? '')),
      ...WORKER_SIGNING_KEYS.split(',').flatMap((k) => secretForms(k.split(':')[1] ?? '')),
    ];
    expect(traffic.find(secrets).map((i) => i.where)).toEqual([]);
  });

  it('reported no CSP violation and no uncaught error', async () => {
    await traffic.settle();
    expect(traffic.cspViolations).toEqual([]);
    const unexpected = traffic.consoleErrors.filter(
      // Refusals the tests provoke are logged by Chromium as failed loads; nothing else may be.
      (i) =>
        !/^Failed to load resource: the server responded with a status of (401|403)/.test(i.text),
    );
    expect(unexpected).toEqual([]);

    // The control: an inline script on a host page is blocked, and the block is seen here.
    const page = await browser.newPage();
    await traffic.attach(page);
    await page.goto(`${demo.url}login`);
    await page.evaluate(() => {
      const script = document.createElement('script');
      script.setAttribute('data-probe', '');
      (script as unknown as { textContent: string }).textContent = 'window.probe = 1;';
      document.body.prepend(script);
    });
    await page.waitForFunction(() => true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(traffic.cspViolations.some((v) => v.includes('script-src'))).toBe(true);
    await page.close();
  });
});

describe('Ctrl-C', () => {
  it('stops the demo cleanly', async () => {
    await browser.close();
    const code = await demo.stop();
    expect(code).toBe(0);
    expect(demo.output()).toMatch(/Ctrl-C: stopping…\nStopped\.\n/);
    for (const form of secretForms(API_KEY)) expect(demo.output()).not.toContain(form);
  });
});
