/**
 * An id with an audience inside a sandboxed frame, as WordPress wraps an oEmbed
 * (`<iframe sandbox="allow-scripts">`, so the chart's data request has `Origin: null`), in real
 * Chromium: on a page of the audience it draws, through the embed page's ticket (so does an id
 * without `aud`, on an edge that grants no origin CORS); on another
 * origin the frame is refused by `frame-ancestors`; and `Origin: null` without the page's own
 * ticket (none, forged, expired, another id's) gets no data.
 */
import { createHmac } from 'node:crypto';
import { elementBundlePath } from '@analytics-chart/demo';
import {
  createEdge,
  engineBackend,
  formatSigningKeys,
  generateSigningKey,
} from '@analytics-chart/edge';
import { bundleFile, type ServedEdge, serveEdge } from '@analytics-chart/edge/node';
import { type EngineWithEvents, startEngine } from '@analytics-chart/test-kit/engine';
import { freePort } from '@analytics-chart/test-kit/free-port';
import type { Browser, Frame, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './support/browser.ts';
import { BrowserTraffic } from './support/browser-traffic.ts';
import { readDrawnCharts, waitForCharts } from './support/drawn-charts.ts';
import { type PageServer, startPageServer } from './support/page-server.ts';
import { SIGNUP_QUERIES, signupEvents } from './support/signup-fixture.ts';

const API_KEY = `canary-${crypto.randomUUID()}-workspace-key`;
const SIGNING_KEY = generateSigningKey();

/** The page-side members the in-frame function uses (the suite compiles without the DOM library). */
interface FrameNode {
  readonly shadowRoot: FrameNode | null;
  querySelector(selector: string): FrameNode | null;
  getContext(kind: '2d'): {
    getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> };
  };
  readonly width: number;
  readonly height: number;
}
declare const document: { querySelector(selector: string): FrameNode | null };

let analytics: EngineWithEvents;
let served: ServedEdge;
let publicUrl: string;
let blog: PageServer;
let elsewhere: PageServer;
let browser: Browser;
const traffic = new BrowserTraffic();
let id = '';
let jti = '';
let otherId = '';
/** An id without `aud`, on an edge whose `allowedOrigins` grants no origin CORS. */
let openId = '';

beforeAll(async () => {
  analytics = await startEngine({
    apiKey: API_KEY,
    events: signupEvents(Math.floor(Date.now() / 1000)),
  });
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
    log: () => {},
  });
  served = await serveEdge(edge, { port, basePath: '/analytics' });
  const signed = await edge.signQueryId({
    query: 'daily-signups',
    params: { tenant: 'acme' },
    public: true,
    audience: [blog.origin],
    ttl: '1h',
  });
  id = signed.id;
  jti = signed.jti;
  otherId = (
    await edge.signQueryId({
      query: 'daily-signups',
      params: { tenant: 'acme' },
      public: true,
      audience: [blog.origin],
      ttl: '1h',
    })
  ).id;
  openId = (
    await edge.signQueryId({
      query: 'daily-signups',
      params: { tenant: 'acme' },
      public: true,
      ttl: '1h',
    })
  ).id;
  browser = await launchChromium();
}, 200_000);

afterAll(async () => {
  await browser?.close();
  await served?.close();
  await blog?.close();
  await elsewhere?.close();
  await analytics?.close();
});

/** WordPress's oEmbed frames around embed pages (wp-includes/embed.php: `sandbox="allow-scripts"`). */
function sandboxedFrame(...sources: string[]): string {
  const frames = sources.map(
    (src) =>
      `<iframe sandbox="allow-scripts" src="${src}" title="Signups per day" width="600" height="300" style="border:0"></iframe>`,
  );
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Post</title></head><body><p>Before.</p>${frames.join('\n')}<p>After.</p></body></html>`;
}

/** The share of the canvas in `frame` that is painted. */
function painted(frame: Frame): Promise<number> {
  return frame.evaluate(() => {
    const canvas = document.querySelector('analytics-chart')?.shadowRoot?.querySelector('canvas');
    if (!canvas || canvas.width === 0) return 0;
    const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let opaque = 0;
    for (let i = 3; i < pixels.length; i += 4) if ((pixels[i] ?? 0) > 0) opaque++;
    return opaque / (pixels.length / 4);
  });
}

async function until(condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function embedFrames(page: Page): Frame[] {
  return page.frames().filter((frame) => frame.url().startsWith(`${publicUrl}/embed/`));
}

function embedFrame(page: Page): Frame | undefined {
  return embedFrames(page)[0];
}

describe('an id with an audience in a sandboxed frame', () => {
  it('draws on a page of its audience: the data request has Origin null and the page’s ticket', async () => {
    // The second frame: an id without aud, on an edge that grants no origin CORS on /api/data.
    blog.setPage(sandboxedFrame(`${publicUrl}/embed/${id}`, `${publicUrl}/embed/${openId}`));
    const page = await browser.newPage();
    await traffic.attach(page);
    const dataRequests: { url: string; origin: string | undefined; status: number }[] = [];
    page.on('response', (response) => {
      if (response.url().includes('/api/data') && response.request().method() === 'GET') {
        dataRequests.push({
          url: response.url(),
          origin: response.request().headers().origin,
          status: response.status(),
        });
      }
    });
    try {
      await page.goto(`${blog.origin}/`);
      await until(() => embedFrames(page).length === 2);
      for (const frame of embedFrames(page)) {
        await waitForCharts(frame);
        const [chart] = await readDrawnCharts(frame);
        expect(chart?.status, JSON.stringify(chart)).toBe('ready');
        expect(chart?.mode).toBe('canvas');
        expect(chart?.title).toBe('Signups per day');
        const values = chart?.series?.[0]?.values ?? [];
        expect(values.reduce<number>((sum, v) => sum + (v ?? 0), 0)).toBe(
          [0, 1, 2, 3, 4, 5, 6].reduce((sum, day) => sum + day + 2, 0),
        );
        expect(await painted(frame)).toBeGreaterThan(0.01);
      }
      // The frames really are sandboxed: their data requests went out with Origin: null.
      expect(dataRequests).toHaveLength(2);
      for (const request of dataRequests) {
        expect(request.origin).toBe('null');
        expect(request.status).toBe(200);
        expect(request.url).toMatch(
          new RegExp(`^${publicUrl}/embed-data/[A-Za-z0-9_.~-]+/api/data$`),
        );
      }
      expect(traffic.cspViolations).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('is refused framing on another origin (frame-ancestors), sandboxed or not', async () => {
    elsewhere.setPage(sandboxedFrame(`${publicUrl}/embed/${id}`));
    const page = await browser.newPage();
    const messages: string[] = [];
    page.on('console', (message) => messages.push(message.text()));
    try {
      await page.goto(`${elsewhere.origin}/`);
      await until(() => messages.some((m) => m.includes('frame-ancestors'))).catch(() => {});
      const refusal = messages.find((m) => m.includes('frame-ancestors'));
      expect(refusal, messages.join('\n')).toContain(`frame-ancestors ${blog.origin}`);
      expect(embedFrame(page)).toBeUndefined();
    } finally {
      await page.close();
    }
  });

  it('gives Origin null no data without the ticket of this id’s page', async () => {
    const page = await (await fetch(`${publicUrl}/embed/${id}`)).text();
    const ticket = /endpoint="\.\.\/embed-data\/([^"/]+)\/"/.exec(page)?.[1] ?? '';
    expect(ticket).not.toBe('');
    const otherPage = await (await fetch(`${publicUrl}/embed/${otherId}`)).text();
    const otherTicket = /endpoint="\.\.\/embed-data\/([^"/]+)\/"/.exec(otherPage)?.[1] ?? '';
    const ask = (path: string) =>
      fetch(`${publicUrl}${path}`, { headers: { authorization: `Bearer ${id}`, origin: 'null' } });
    /** A ticket made by hand as the edge documents it, for this id and this address. */
    const handMade = (secret: string, exp: number) => {
      const nonce = 'handmadenonce';
      const input = `analytics-edge embed ticket v1\n${SIGNING_KEY.kid}\n${exp}\n${nonce}\n${jti}\n127.0.0.1`;
      const mac = createHmac('sha256', secret).update(input).digest('base64url');
      return [SIGNING_KEY.kid, exp.toString(36), nonce, mac].join('~');
    };
    const now = Math.floor(Date.now() / 1000);
    // The positive control: the page's own ticket, and a hand-made one with the real key.
    expect((await ask(`/embed-data/${ticket}/api/data`)).status).toBe(200);
    expect(
      (await ask(`/embed-data/${handMade(SIGNING_KEY.secret, now + 300)}/api/data`)).status,
    ).toBe(200);
    for (const path of [
      '/api/data',
      '/embed-data/none/api/data',
      `/embed-data/${handMade('another-secret-of-thirty-two-chars!!', now + 300)}/api/data`,
      `/embed-data/${handMade(SIGNING_KEY.secret, now - 5)}/api/data`,
      `/embed-data/${otherTicket}/api/data`,
    ]) {
      const response = await ask(path);
      expect(response.status, path).toBe(403);
      const body = (await response.json()) as { code: string; error: string };
      expect(body.code).toBe('forbidden');
    }
  });
});
