/**
 * The demo's example site over its real HTTP interface, with the host app's edge on the real
 * engine and hand-placed events: every template filled with public ids limited to the site's
 * configured origin, never to a request's Host, and one kept page per path.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEdge, type Edge, engineBackend, generateSigningKey } from '@analytics-chart/edge';
import { createEngine, type Engine } from '@analytics-chart/engine';
import { hostEdgeConfig } from '@analytics-chart/example-host-app';
import { countEvents, fixtureEvents } from '@analytics-chart/test-kit/fixture-events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExamplesSite } from '../src/examples-site/create-examples-site.ts';

const ORIGIN = 'http://host.test';
const API_KEY = `examples-site-test-${crypto.randomUUID()}`;

let dataDir: string;
let engine: Engine;
let edge: Edge;
const now = Math.floor(Date.now() / 1000);
const events = fixtureEvents(now);

/** The edge as the host app mounts it, at `/analytics` of {@link ORIGIN}. */
const app = {
  request: (url: string, init?: RequestInit) =>
    edge.app.request(url.replace(`${ORIGIN}/analytics`, ''), init),
};

function claimsOf(id: string): Record<string, unknown> {
  const payload = id.split('.')[1] ?? '';
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'examples-site-test-'));
  engine = await createEngine({ dataDir, workspaces: { default: API_KEY } });
  for (const e of events) {
    const r = await engine.log({ api_key: API_KEY, json: e.json, timestamp: e.timestamp });
    expect(r.status).toBe(200);
  }
  edge = createEdge(
    hostEdgeConfig({
      session: { secret: 'a-session-secret-of-at-least-32-characters', secure: false },
      backend: engineBackend(engine, { apiKey: API_KEY }),
      signingKeys: [generateSigningKey()],
      bundle: 'export {};\n',
      log: () => {},
    }),
  );
});

afterAll(async () => {
  await engine?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('example site', () => {
  it('fills the committed templates with public ids limited to its own origin', async () => {
    const site = createExamplesSite({
      edge,
      edgeUrl: `${ORIGIN}/analytics`,
      dashboardUrl: `${ORIGIN}/`,
      origin: 'http://examples.test',
    });
    await site.prerender();
    const response = await site.app.request('http://examples.test/plain-html/');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toContain(`script-src ${ORIGIN}`);
    const page = await response.text();
    expect(page).toContain(`<script type="module" src="${ORIGIN}/analytics/analytics-chart.js">`);
    expect(page).not.toMatch(/\{\{\s*(edge|sign\s+[a-z])/);
    const ids = [...page.matchAll(/query-id="([^"]+)"/g)].map((m) => m[1] as string);
    expect(ids.length).toBeGreaterThanOrEqual(3);
    for (const id of ids) {
      expect(claimsOf(id)).toMatchObject({
        pub: true,
        aud: 'http://examples.test',
        p: { tenant: 'acme' },
      });
    }
    const signups = ids.find((id) => claimsOf(id).q === 'public-signups');
    const data = await app.request(`${ORIGIN}/analytics/api/data`, {
      headers: { origin: 'http://examples.test', authorization: `Bearer ${signups}` },
    });
    expect(data.status).toBe(200);
    expect(data.headers.get('access-control-allow-origin')).toBe('*');
    const payload = (await data.json()) as { value: number };
    expect(payload.value).toBe(countEvents(events, 'acme', now - 7 * 86_400, now + 60, 'signup'));
    const elsewhere = await app.request(`${ORIGIN}/analytics/api/data`, {
      headers: { origin: 'https://other.example', authorization: `Bearer ${signups}` },
    });
    expect(elsewhere.status).toBe(403);
  });

  it('takes no origin from the Host header, and keeps one page per path over 10,000 Hosts', async () => {
    let minted = 0;
    const counting: Edge = {
      ...edge,
      signQueryId: (options) => {
        minted++;
        return edge.signQueryId(options);
      },
    };
    const site = createExamplesSite({
      edge: counting,
      edgeUrl: `${ORIGIN}/analytics`,
      dashboardUrl: `${ORIGIN}/`,
      origin: 'http://examples.test',
    });
    const first = await (await site.app.request('http://examples.test/plain-html/')).text();
    const mintedForPage = minted;
    expect(mintedForPage).toBeGreaterThanOrEqual(3);
    // What `curl -H 'Host: evil.example'` sends: the request URL carries the Host.
    const evil = await (
      await site.app.request('http://evil.example/plain-html/', {
        headers: { host: 'evil.example' },
      })
    ).text();
    expect(evil).toBe(first);
    const ids = [...evil.matchAll(/query-id="([^"]+)"/g)].map((m) => m[1] as string);
    for (const id of ids) expect(claimsOf(id).aud).toBe('http://examples.test');
    const data = await app.request(`${ORIGIN}/analytics/api/data`, {
      headers: { origin: 'http://evil.example', authorization: `Bearer ${ids[0]}` },
    });
    expect(data.status).toBe(403);
    for (let i = 0; i < 10_000; i++) {
      const response = await site.app.request(`http://h${i}.example/plain-html/`);
      // Identical bytes for every Host: nothing was minted or kept per Host.
      if ((await response.text()) !== first) throw new Error(`host h${i} got another page`);
    }
    expect(minted).toBe(mintedForPage);
    expect(site.pagesKept()).toBe(1);
  }, 60_000);
});
