/**
 * The Worker example (examples/cloudflare-worker, its wrangler.toml and entry as they are) under
 * workerd (miniflare), with its HTTP backend pointed at a real engine listening on 127.0.0.1:
 * its registry's session-bound charts signed and answered through the host's session cookie,
 * public ids, the tenant lock, and the key kept out of every answer and log line. Expected
 * numbers are counted from the test kit's fixture events.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import {
  createEdge,
  formatSigningKeys,
  generateSigningKey,
  httpBackend,
} from '@analytics-chart/edge';
import {
  SESSION_QUERIES,
  WORKER_QUERIES,
} from '@analytics-chart/example-cloudflare-worker/queries';
import { type EngineWithEvents, startEngine } from '@analytics-chart/test-kit/engine';
import { fixtureEvents } from '@analytics-chart/test-kit/fixture-events';
import {
  bundleWorker,
  durableObjectBindings,
  type LocalWorker,
  runUnderWorkerd,
} from '@analytics-chart/test-kit/workerd';
import { sign } from 'hono/jwt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
/** The example's folder: its wrangler.toml names the entry the local run bundles. */
const PROJECT = dirname(require.resolve('@analytics-chart/example-cloudflare-worker/package.json'));
/** The element's bundle as installed: what the Worker must serve byte for byte. */
const ELEMENT_BUNDLE = require.resolve('@analytics-chart/element/analytics-chart.js');
const API_KEY = `worker-canary-${crypto.randomUUID()}`;
const SESSION_SECRET = `session-${crypto.randomUUID()}`;
const KEYS = [generateSigningKey()];
const DAY = 86_400;
const now = Math.floor(Date.now() / 1000);

const events = fixtureEvents(now);

function count(
  tenant: string,
  start: number,
  end: number,
  filter: (json: Record<string, unknown>) => boolean = () => true,
) {
  return events.filter(
    (e) => e.json.tenant === tenant && e.timestamp > start && e.timestamp < end && filter(e.json),
  ).length;
}

let analytics: EngineWithEvents;
let backendUrl = '';
let worker: LocalWorker;
let edgeUrl: string;
const seen: string[] = [];

async function sessionToken(subject: string, tenant: string): Promise<string> {
  return sign({ sub: subject, tenant, exp: now + 3600 }, SESSION_SECRET, 'HS256');
}

async function call(path: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(`${edgeUrl}${path}`, init);
  const text = await response.clone().text();
  seen.push(text, JSON.stringify([...response.headers]));
  return response;
}

/** Signs a session query through the Worker's own sign route, as the host's server would. */
async function signFor(query: string, session: string): Promise<string> {
  const response = await call('/api/sign', {
    method: 'POST',
    headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { id: string }).id;
}

async function data(id: string, session?: string, origin?: string): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${id}` };
  if (session) headers.cookie = `session=${session}`;
  if (origin) headers.origin = origin;
  return call('/api/data', { headers });
}

/** A public id, minted offline with the same keys, as `pnpm edge sign --public` does. */
async function publicId(query: string, tenant: string): Promise<string> {
  const signer = createEdge({
    signingKeys: KEYS,
    backend: httpBackend({ baseUrl: backendUrl, apiKey: API_KEY }),
    queries: WORKER_QUERIES,
    log: () => {},
  });
  return (await signer.signQueryId({ query, params: { tenant }, public: true })).id;
}

beforeAll(async () => {
  analytics = await startEngine({ apiKey: API_KEY, events, serve: true });
  backendUrl = analytics.url ?? '';
  worker = await runUnderWorkerd(PROJECT, {
    ANALYTICS_BASE_URL: backendUrl,
    ANALYTICS_API_KEY: API_KEY,
    EDGE_SIGNING_KEYS: formatSigningKeys(KEYS),
    SESSION_SECRET,
    EDGE_ALLOWED_ORIGINS: 'https://app.example.com,*',
  });
  edgeUrl = `${worker.origin}/analytics`;
}, 60_000);

afterAll(async () => {
  await worker?.close();
  await analytics?.close();
});

describe('the edge as a Worker under workerd', () => {
  it("leaves zod's translations out of the Worker script", async () => {
    // A Worker's size is its start-up time. `import { z } from 'zod'` pulls in every export of
    // zod, all error-message locales included; `import * as z from 'zod'` lets the bundler keep
    // only what is used.
    const { script, sources } = await bundleWorker(PROJECT);
    const zod = sources.filter((path) => /[\\/]zod[\\/]/.test(path));
    expect(zod.length).toBeGreaterThan(0);
    expect(zod.filter((path) => /[\\/]locales[\\/](?!en\.js$)/.test(path))).toEqual([]);
    // All of zod's locales add some 0.6 MB; the edge itself (with its registry, admin API and D1
    // store) is most of the rest.
    expect(script.length).toBeLessThan(900_000);
  });

  it('serves health and the element bundle built into the Worker', async () => {
    expect(await (await call('/health')).json()).toEqual({ ok: true });
    const response = await call('/analytics-chart.js');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('javascript');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(await response.text()).toBe(readFileSync(ELEMENT_BUNDLE, 'utf8'));
  });

  it('serves every session chart for a signed-in acme user', async () => {
    const alice = await sessionToken('alice@acme', 'acme');
    for (const name of Object.keys(SESSION_QUERIES)) {
      const response = await data(await signFor(name, alice), alice);
      expect(response.status, name).toBe(200);
      const payload = (await response.json()) as { graph: string };
      expect(payload.graph).toBe(SESSION_QUERIES[name]?.query.graph_type);
    }
  }, 60_000);

  it("answers with the signed-in tenant's numbers, counted from the events", async () => {
    const alice = await sessionToken('alice@acme', 'acme');
    const kpi = (await (await data(await signFor('signups-week', alice), alice)).json()) as {
      value: number;
      compareValue: number;
    };
    const signup = (json: Record<string, unknown>) => json.event === 'signup';
    expect(kpi.value).toBe(count('acme', now - 7 * DAY, now + 60, signup));
    expect(kpi.compareValue).toBe(count('acme', now - 14 * DAY, now - 7 * DAY, signup));
    // Acme's signups are its odd-numbered events of each day: 0 + 1 + 1 + 2 + 2 + 3 + 3 this week.
    expect(kpi.value).toBe(12);

    const table = (await (await data(await signFor('top-countries', alice), alice)).json()) as {
      rows: [string, number][];
    };
    const monthAgo = now - 30 * DAY;
    expect(table.rows).toEqual([
      ['US', count('acme', monthAgo, now + 60, (j) => j.country === 'US')],
      ['DE', count('acme', monthAgo, now + 60, (j) => j.country === 'DE')],
    ]);
  });

  it('refuses an acme id in a globex session and without a session', async () => {
    const alice = await sessionToken('alice@acme', 'acme');
    const bob = await sessionToken('bob@globex', 'globex');
    const id = await signFor('events-daily', alice);
    const replayed = await data(id, bob);
    expect(replayed.status).toBe(403);
    expect(((await replayed.json()) as { code: string }).code).toBe('forbidden');
    expect((await data(id)).status).toBe(401);
  });

  it('serves public ids to any origin without credentials', async () => {
    const id = await publicId('public-signups', 'acme');
    const response = await data(id, undefined, 'https://blog.example.org');
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const payload = (await response.json()) as { value: number };
    expect(payload.value).toBe(count('acme', now - 7 * DAY, now + 60, (j) => j.event === 'signup'));
  });

  it('limits an id through the Durable Object wrangler.toml binds', async () => {
    expect(durableObjectBindings(PROJECT)).toEqual({ EDGE_RATE_LIMITER: 'RateLimiterObject' });
    const id = await publicId('public-signups', 'acme');
    // The default per-id bucket: a burst of 30, refilling 5 a second (so requests faster than
    // 200 ms each meet the 429).
    const statuses: number[] = [];
    while (statuses.length < 200 && !statuses.includes(429)) statuses.push((await data(id)).status);
    expect(statuses.slice(0, 30)).toEqual(Array(30).fill(200));
    expect(statuses.at(-1)).toBe(429);
    expect(worker.logs.filter((l) => l.includes('edge.rate_limiter'))).toEqual([]);
  });

  it('never shows the workspace key in an answer, a header or a log line', () => {
    expect(seen.length).toBeGreaterThan(20);
    for (const text of [...seen, ...worker.logs]) expect(text).not.toContain(API_KEY);
  });
});

describe('a misconfigured Worker', () => {
  it('answers a JSON 500 naming no secret, and logs which setting is missing', async () => {
    const broken = await runUnderWorkerd(PROJECT, {
      ANALYTICS_BASE_URL: backendUrl,
      EDGE_SIGNING_KEYS: formatSigningKeys(KEYS),
      SESSION_SECRET,
    });
    try {
      const response = await fetch(`${broken.origin}/analytics/health`);
      expect(response.status).toBe(500);
      const body = (await response.json()) as { error: string };
      expect(body.error).toMatch(/misconfigured/);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(broken.logs.join('\n')).toContain('ANALYTICS_API_KEY is not set');
    } finally {
      await broken.close();
    }
  }, 30_000);
});
