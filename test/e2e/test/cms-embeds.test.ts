/**
 * CMS embeds in real Chromium: an edge on one loopback port (its engine in process, DuckDB really
 * queried), article pages on two others. The iframe snippet draws on a page of the id's audience
 * and follows its chart's height; a page of another origin is refused framing; oEmbed answers
 * what the spec requires; and the snippets go through the sanitizer and the Markdown renderer the
 * CMS guide names, with the guide's tables for custom-HTML CMSs and Markdown sites held against
 * what draws. (WordPress itself, kses and all, is tested for real in test/wordpress.)
 */
import { fileURLToPath } from 'node:url';
import { elementBundlePath } from '@analytics-chart/demo';
import {
  createEdge,
  engineBackend,
  formatSigningKeys,
  generateSigningKey,
  snippetsFor,
} from '@analytics-chart/edge';
import { bundleFile, type ServedEdge, serveEdge } from '@analytics-chart/edge/node';
import { type EngineWithEvents, startEngine } from '@analytics-chart/test-kit/engine';
import { freePort } from '@analytics-chart/test-kit/free-port';
import { cellWord, tableUnder } from '@analytics-chart/test-kit/guide-tables';
import MarkdownIt from 'markdown-it';
import type { Browser, Frame, Page } from 'puppeteer-core';
import sanitizeHtml from 'sanitize-html';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './support/browser.ts';
import { BrowserTraffic } from './support/browser-traffic.ts';
import { type DrawnChart, readDrawnCharts, waitForCharts } from './support/drawn-charts.ts';
import { type PageServer, startPageServer } from './support/page-server.ts';
import { SIGNUP_QUERIES, signupEvents } from './support/signup-fixture.ts';

/** The workspace key and the signing key: canaries that must never reach the browser. */
const API_KEY = `canary-${crypto.randomUUID()}-workspace-key`;
const SIGNING_KEY = generateSigningKey();

/** The page-side members the in-frame functions use (the suite compiles without the DOM library). */
interface FrameDocument {
  querySelector(selector: string): FrameNode | null;
  querySelectorAll(selector: string): ArrayLike<FrameNode>;
}
interface FrameNode {
  readonly shadowRoot: FrameNode | null;
  querySelector(selector: string): FrameNode | null;
  getContext(kind: '2d'): {
    getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> };
  };
  readonly width: number;
  readonly height: number;
  readonly offsetHeight: number;
  readonly status?: string;
}
declare const document: FrameDocument;
declare const customElements: { get(name: string): unknown };

let analytics: EngineWithEvents;
let served: ServedEdge;
let publicUrl: string;
const logs: string[] = [];
let blog: PageServer;
let elsewhere: PageServer;
let browser: Browser;
const traffic = new BrowserTraffic();
let id = '';
/** Acme's signups per UTC day, counted here from the fixture. */
const expected = new Map<string, number>();

beforeAll(async () => {
  const events = signupEvents(Math.floor(Date.now() / 1000));
  for (const event of events) {
    if (event.json.tenant === 'acme') {
      const day = new Date(event.timestamp * 1000).toISOString().slice(0, 10);
      expected.set(day, (expected.get(day) ?? 0) + 1);
    }
  }
  analytics = await startEngine({ apiKey: API_KEY, events });
  blog = await startPageServer();
  elsewhere = await startPageServer();
  const port = await freePort();
  publicUrl = `http://127.0.0.1:${port}/analytics`;
  const edge = createEdge({
    signingKeys: formatSigningKeys([SIGNING_KEY]),
    backend: engineBackend(analytics.engine, { apiKey: API_KEY }),
    queries: SIGNUP_QUERIES,
    bundle: bundleFile(elementBundlePath()),
    publicUrl,
    // The blog's own pages fetch chart data with the script and element snippet.
    allowedOrigins: [blog.origin],
    log: (entry) => logs.push(JSON.stringify(entry)),
  });
  served = await serveEdge(edge, { port, basePath: '/analytics' });
  expect(served.url).toBe(publicUrl);
  id = (
    await edge.signQueryId({
      query: 'daily-signups',
      params: { tenant: 'acme' },
      public: true,
      audience: [blog.origin],
      ttl: '1h',
    })
  ).id;
  browser = await launchChromium();
  traffic.attachBrowser(browser);
}, 200_000);

afterAll(async () => {
  await browser?.close();
  await served?.close();
  await blog?.close();
  await elsewhere?.close();
  await analytics?.close();
});

/** The CMS guide, whose tables for custom-HTML CMSs and Markdown sites this suite keeps true. */
const GUIDE = fileURLToPath(new URL('../../../examples/cms-embed/README.md', import.meta.url));

/** What a Markdown renderer did to the snippets, in the guide's words. */
function markdownDoes(pairs: [string, string][]): string {
  const html = pairs.filter(([pasted]) => pasted.includes('<'));
  if (html.every(([pasted, stored]) => stored.includes(pasted.split('\n')[0] ?? pasted))) {
    return 'passes HTML through';
  }
  if (html.every(([, stored]) => !/<(script|iframe|analytics-chart)/.test(stored))) {
    return 'escapes HTML, so it shows as text';
  }
  return 'changes it';
}

/**
 * What a reader of the blog's page sees of the one snippet on it: `draws` (a chart is drawn, in
 * the page or in an embed frame), `text` (the snippet's id shows as text) or `removed` (neither).
 */
async function pageOutcome(page: Page): Promise<string> {
  // A lazy frame may still be blank when the page has loaded.
  if (await page.$(`iframe[src^="${publicUrl}/embed/"]`)) {
    await until(() => embedFrames(page).length > 0);
  }
  const frames = embedFrames(page);
  const element = await page.$('analytics-chart');
  if (frames.length > 0 || element) {
    const where = frames[0] ?? page.mainFrame();
    const defined = await where
      .evaluate(() => customElements.get('analytics-chart') !== undefined)
      .catch(() => false);
    if (frames.length > 0 || defined) {
      const { chart, painted } = await drawnIn(where);
      if (chart.status === 'ready' && painted > 0.01) return 'draws';
      return `not drawn: ${chart.status}`;
    }
  }
  const text = (await page.evaluate('document.body.innerText')) as string;
  return text.includes(id) ? 'text' : 'removed';
}

/** An article page around `content`, with an optional CSP meta tag. */
function article(content: string, csp?: string): string {
  const policy = csp ? `<meta http-equiv="Content-Security-Policy" content="${csp}">` : '';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">${policy}<title>Article</title></head><body><h1>Quarterly numbers</h1><p>Before the chart.</p>${content}<p id="after">After the chart.</p></body></html>`;
}

/** Polls `condition` (a real browser takes its time on a shared machine). */
async function until(condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The embed frames of a page, by the order of their iframes. */
function embedFrames(page: Page): Frame[] {
  return page.frames().filter((frame) => frame.url().startsWith(`${publicUrl}/embed/`));
}

/** Waits for the chart of an embed frame and reads it, with the share of its canvas that is painted. */
async function drawnIn(frame: Frame): Promise<{ chart: DrawnChart; painted: number }> {
  await waitForCharts(frame);
  const [chart] = await readDrawnCharts(frame);
  const painted = await frame.evaluate(() => {
    const canvas = document.querySelector('analytics-chart')?.shadowRoot?.querySelector('canvas');
    if (!canvas || canvas.width === 0) return 0;
    const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let opaque = 0;
    for (let i = 3; i < pixels.length; i += 4) if ((pixels[i] ?? 0) > 0) opaque++;
    return opaque / (pixels.length / 4);
  });
  if (!chart) throw new Error(`no chart in ${frame.url()}`);
  return { chart, painted };
}

/** The chart shows acme's signups per day, exactly as counted from the fixture. */
function expectAcmeSignups(chart: DrawnChart) {
  expect(chart.status).toBe('ready');
  expect(chart.mode).toBe('canvas');
  expect(chart.title).toBe('Signups per day');
  const labels = chart.labels ?? [];
  const values = chart.series?.[0]?.values ?? [];
  expect(labels.length).toBeGreaterThanOrEqual(7);
  const drawn = new Map(labels.map((label, i) => [label.slice(0, 10), values[i] ?? 0]));
  for (const [day, count] of expected) expect(drawn.get(day), day).toBe(count);
  const total = values.reduce<number>((sum, v) => sum + (v ?? 0), 0);
  expect(total).toBe([...expected.values()].reduce((a, b) => a + b, 0));
}

describe('CMS embeds in Chromium', () => {
  it('draws the iframe snippet on a page of its audience, and follows the chart height with embed.js', async () => {
    const snippets = snippetsFor({ base: publicUrl, id, title: 'Signups per day' });
    // A second frame whose URL asks for a taller chart than its iframe's height attribute.
    const taller = snippets.iframe.replace(`/embed/${id}"`, `/embed/${id}?height=420"`);
    expect(taller).not.toBe(snippets.iframe);
    // A frame of another origin that posts the same message: it must move nothing.
    elsewhere.setPage(
      `<!doctype html><title>impostor</title><script>parent.postMessage({ type: 'analytics-chart:resize', height: 999 }, '*');</script>`,
    );
    const impostor = `<iframe src="${elsewhere.origin}/" title="impostor" height="150" style="border:0"></iframe>`;
    blog.setPage(article(`${snippets.iframe}\n${taller}\n${impostor}\n${snippets.resizeScript}`));
    const page = await browser.newPage();
    await traffic.attach(page);
    try {
      // Every height each iframe has had, from before the first frame loads.
      await page.evaluateOnNewDocument(`
        window.__heights = [[], [], []];
        window.__messages = [];
        addEventListener('message', (e) => window.__messages.push(e.data));
        new MutationObserver(() => {
          const frames = document.querySelectorAll('iframe');
          frames.forEach((frame, i) => {
            if (frame.__watched) return;
            frame.__watched = true;
            new ResizeObserver(() => window.__heights[i].push(frame.offsetHeight)).observe(frame);
          });
        }).observe(document, { childList: true, subtree: true });
      `);
      await page.goto(`${blog.origin}/`);
      await until(() => embedFrames(page).length === 2);
      const [fixed, grown] = embedFrames(page);
      if (!fixed || !grown) throw new Error('two embed frames expected');
      for (const frame of [fixed, grown]) {
        const { chart, painted } = await drawnIn(frame);
        expectAcmeSignups(chart);
        expect(painted, 'share of the canvas painted').toBeGreaterThan(0.01);
      }
      await page.waitForFunction(
        () => (document.querySelectorAll('iframe')[1]?.offsetHeight ?? 0) === 420,
        { polling: 100, timeout: 10_000 },
      );
      const state = (await page.evaluate(
        '({heights: window.__heights, messages: window.__messages})',
      )) as {
        heights: number[][];
        messages: unknown[];
      };
      // The snippet's frame never changed height (no layout jump); the other one grew once.
      expect(state.heights[0]).toEqual([300]);
      expect(state.heights[1]).toEqual([300, 420]);
      expect(state.messages).toContainEqual({ type: 'analytics-chart:resize', height: 300 });
      expect(state.messages).toContainEqual({ type: 'analytics-chart:resize', height: 420 });
      // The impostor's message arrived, and resized nothing: it is not from the edge's origin.
      expect(state.messages).toContainEqual({ type: 'analytics-chart:resize', height: 999 });
      expect(state.heights[2]).toEqual([150]);
    } finally {
      await page.close();
    }
  });

  it('is refused framing on an origin outside the id’s audience, with a CSP violation', async () => {
    const snippets = snippetsFor({ base: publicUrl, id, title: 'Signups per day' });
    elsewhere.setPage(article(snippets.iframe));
    const page = await browser.newPage();
    await traffic.attach(page);
    const messages: string[] = [];
    page.on('console', (message) => messages.push(message.text()));
    const embedAnswers: number[] = [];
    page.on('response', (response) => {
      if (response.url().startsWith(`${publicUrl}/embed/`)) embedAnswers.push(response.status());
    });
    try {
      await page.goto(`${elsewhere.origin}/`);
      await until(() => messages.some((m) => m.includes('frame-ancestors'))).catch(() => {});
      const refusal = messages.find((m) => m.includes('frame-ancestors'));
      expect(refusal, messages.join('\n')).toBeDefined();
      expect(refusal).toContain(`frame-ancestors ${blog.origin}`);
      // The edge answered the page; Chromium refused to show it in this frame.
      expect(embedAnswers).toEqual([200]);
      const frames = page.frames().filter((frame) => frame !== page.mainFrame());
      expect(frames.length).toBe(1);
      expect(frames[0]?.url()).not.toContain('/embed/');
      expect(await page.evaluate(() => document.querySelector('iframe')?.offsetHeight)).toBe(300);
    } finally {
      await page.close();
    }
  });
  it('answers oEmbed for the embed URL with every field the spec requires, within maxwidth and maxheight', async () => {
    // Discovery as a CMS server does it: the embed page's <link rel="alternate">.
    const embedPage = await (await fetch(`${publicUrl}/embed/${id}`)).text();
    const href =
      /<link rel="alternate" type="application\/json\+oembed" href="([^"]+)"/
        .exec(embedPage)?.[1]
        ?.replaceAll('&amp;', '&') ?? '';
    expect(href).toBe(
      `${publicUrl}/oembed?url=${encodeURIComponent(`${publicUrl}/embed/${id}`)}&format=json`,
    );
    for (const [limits, width, height] of [
      ['', 600, 300],
      ['&maxwidth=500&maxheight=260', 500, 260],
      ['&maxwidth=1200&maxheight=900', 1200, 300],
    ] as const) {
      const response = await fetch(`${href}${limits}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const answer = (await response.json()) as Record<string, unknown>;
      // oEmbed 1.0, section 2.3.4: type and version always; html, width and height for rich.
      expect(answer.version).toBe('1.0');
      expect(answer.type).toBe('rich');
      expect(typeof answer.html).toBe('string');
      expect(Number.isInteger(answer.width) && (answer.width as number) > 0).toBe(true);
      expect(Number.isInteger(answer.height) && (answer.height as number) > 0).toBe(true);
      expect([answer.width, answer.height]).toEqual([width, height]);
      for (const field of ['title', 'provider_name', 'provider_url']) {
        expect(typeof answer[field], field).toBe('string');
      }
      expect(answer.title).toBe('Signups per day');
      expect(Number.isInteger(answer.cache_age)).toBe(true);
      // The html is one iframe of the embed page, no larger than the answer says.
      const html = String(answer.html);
      expect(html).toMatch(/^<iframe [^>]*><\/iframe>$/);
      expect(html).toContain(` width="${width}" height="${height}"`);
      const src = /src="([^"]+)"/.exec(html)?.[1]?.replaceAll('&amp;', '&') ?? '';
      expect(src).toBe(`${publicUrl}/embed/${id}${height === 300 ? '' : `?height=${height}`}`);
      expect(html).not.toContain('<script');
    }
    const other = await fetch(
      `${publicUrl}/oembed?url=${encodeURIComponent(`${blog.origin}/embed/${id}`)}`,
    );
    expect(other.status).toBe(404);
    expect((await fetch(href.replace('format=json', 'format=xml'))).status).toBe(501);
  });

  it('keeps the guide true for custom-HTML CMSs and Markdown sites, cell by cell', async () => {
    const snippets = snippetsFor({ base: publicUrl, id, title: 'Signups per day' });
    const columns = {
      'Script and element': snippets.element,
      Iframe: snippets.iframe,
      'Embed URL': snippets.url,
    };
    const markdown = new MarkdownIt();
    const markdownHtml = new MarkdownIt({ html: true });
    /** Each row of the guide's tables: what the CMS stores for a pasted snippet, and the last column's words for it. */
    const rows: Record<
      string,
      { store: (html: string) => string; does: (pairs: [string, string][]) => string }
    > = {
      'An HTML block kept as written': {
        store: (html) => html,
        does: (pairs) => (pairs.every(([i, o]) => i === o) ? 'nothing' : 'changes it'),
      },
      'A field cleaned by sanitize-html (defaults)': {
        store: (html) => sanitizeHtml(html),
        does: (pairs) => {
          const gone = [
            ['`<script>`', '<script'],
            ['`<iframe>`', '<iframe'],
            ['unknown elements', '<analytics-chart'],
          ].filter(([, tag]) =>
            pairs.some(([i, o]) => i.includes(tag as string) && !o.includes(tag as string)),
          );
          const names = gone.map(([name]) => name);
          return `removes ${names.slice(0, -1).join(', ')}${names.length > 1 ? ' and ' : ''}${names.at(-1)}`;
        },
      },
      'markdown-it (default: `html: false`)': {
        store: (text) => markdown.render(text),
        does: markdownDoes,
      },
      'markdown-it with `html: true`': {
        store: (text) => markdownHtml.render(text),
        does: markdownDoes,
      },
    };
    const page = await browser.newPage();
    await traffic.attach(page);
    try {
      for (const heading of ['Custom-HTML CMSs', 'Markdown sites']) {
        const table = tableUnder(GUIDE, heading);
        expect(table.header.slice(1, 4)).toEqual(Object.keys(columns));
        for (const [label, ...cells] of table.rows) {
          const row = rows[label ?? ''];
          expect(row, `row "${label}" of "${heading}" is none of the ones tested`).toBeDefined();
          if (!row) continue;
          const pairs: [string, string][] = [];
          for (const [i, [column, pasted]] of Object.entries(columns).entries()) {
            const stored = row.store(pasted);
            pairs.push([pasted, stored]);
            blog.setPage(article(stored));
            await page.goto(`${blog.origin}/`);
            expect(cellWord(cells[i] ?? ''), `${heading} / ${label} / ${column}`).toBe(
              await pageOutcome(page),
            );
          }
          expect(cells[3], `${heading} / ${label} / what it does`).toBe(row.does(pairs));
        }
      }
    } finally {
      await page.close();
    }
  });

  it('draws the iframe and the oEmbed html where no script runs', async () => {
    const snippets = snippetsFor({ base: publicUrl, id, title: 'Signups per day' });
    const oembed = (await (
      await fetch(`${publicUrl}/oembed?url=${encodeURIComponent(snippets.url)}&maxwidth=640`)
    ).json()) as { html: string };
    // A page that runs no script at all: the element snippet is inert there, the iframe and the
    // oEmbed html still draw.
    blog.setPage(
      article([snippets.element, snippets.iframe, oembed.html].join('\n'), "script-src 'none'"),
    );
    const page = await browser.newPage();
    await traffic.attach(page);
    try {
      await page.goto(`${blog.origin}/`);
      await until(() => embedFrames(page).length === 2);
      for (const frame of embedFrames(page)) {
        const { chart, painted } = await drawnIn(frame);
        expectAcmeSignups(chart);
        expect(painted).toBeGreaterThan(0.01);
      }
      expect(
        await page.evaluate(() => ({
          defined: customElements.get('analytics-chart') !== undefined,
          upgraded: document.querySelector('analytics-chart')?.shadowRoot !== null,
        })),
      ).toEqual({ defined: false, upgraded: false });
      expect(traffic.cspViolations).toContainEqual(
        `CSP violation: script-src-elem blocked ${publicUrl}/analytics-chart.js`,
      );
    } finally {
      await page.close();
    }
  });

  it('draws the embed page under its own CSP without a single violation or error', async () => {
    const violations = traffic.cspViolations.length;
    const errors = traffic.consoleErrors.length;
    const page = await browser.newPage();
    await traffic.attach(page);
    try {
      const response = await page.goto(`${publicUrl}/embed/${id}?theme=dark&height=360`);
      expect(response?.status()).toBe(200);
      expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
      const { chart, painted } = await drawnIn(page.mainFrame());
      expectAcmeSignups(chart);
      expect(painted).toBeGreaterThan(0.01);
      expect(
        await page.evaluate(() => document.querySelector('analytics-chart')?.offsetHeight),
      ).toBe(360);
      expect(traffic.cspViolations.slice(violations)).toEqual([]);
      expect(traffic.consoleErrors.slice(errors)).toEqual([]);
      // The positive control of the listener: a style the page's CSP does not allow is reported.
      await page.evaluate(
        `document.head.append(Object.assign(document.createElement('style'), { textContent: 'p{}' }))`,
      );
      await until(() =>
        traffic.cspViolations
          .slice(violations)
          .includes('CSP violation: style-src-elem blocked inline'),
      );
    } finally {
      await page.close();
    }
  });

  it('shows the browser no secret and no other tenant’s data', async () => {
    await traffic.settle();
    expect(traffic.find([id]).length, 'the id itself was seen (positive control)').toBeGreaterThan(
      0,
    );
    const secrets = [
      API_KEY,
      SIGNING_KEY.secret,
      Buffer.from(API_KEY).toString('base64'),
      Buffer.from(API_KEY).toString('base64url'),
      'globex',
      'ceo@',
    ];
    expect(traffic.find(secrets).map((item) => item.where)).toEqual([]);
    for (const line of logs) for (const secret of secrets) expect(line).not.toContain(secret);
  });
});
