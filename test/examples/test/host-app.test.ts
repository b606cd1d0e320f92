/**
 * The host app over its real HTTP interface (`app.fetch`), with the real edge and the real
 * engine on a temporary workspace of hand-placed events: sign-in, cookie flags, the CSP, ids
 * minted per session and tenant, and the tenant lock.
 */
import { createEdge, type Edge, engineBackend, generateSigningKey } from '@analytics-chart/edge';
import {
  createHostApp,
  createUserStore,
  DASHBOARD_LAYOUT,
  demoUsers,
  hostEdgeConfig,
} from '@analytics-chart/example-host-app';
import { type EngineWithEvents, startEngine } from '@analytics-chart/test-kit/engine';
import { countEvents, fixtureEvents } from '@analytics-chart/test-kit/fixture-events';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ORIGIN = 'http://host.test';
const API_KEY = `host-app-test-${crypto.randomUUID()}`;
const PASSWORD = 'correct horse battery';
const session = { secret: 'a-session-secret-of-at-least-32-characters', secure: false };

let analytics: EngineWithEvents;
let edge: Edge;
let app: Hono;
const now = Math.floor(Date.now() / 1000);
const events = fixtureEvents(now);

function claimsOf(id: string): Record<string, unknown> {
  const payload = id.split('.')[1] ?? '';
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
}

async function signIn(login: string, password = PASSWORD): Promise<Response> {
  return app.request(`${ORIGIN}/login`, {
    method: 'POST',
    headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ login, password }).toString(),
  });
}

async function cookieOf(login: string): Promise<string> {
  const response = await signIn(login);
  expect(response.status).toBe(303);
  const setCookie = response.headers.get('set-cookie') ?? '';
  return setCookie.split(';')[0] ?? '';
}

async function dashboardIds(cookie: string): Promise<Map<string, string>> {
  const response = await app.request(`${ORIGIN}/dashboard`, { headers: { cookie } });
  expect(response.status).toBe(200);
  const page = await response.text();
  const ids = new Map<string, string>();
  for (const m of page.matchAll(/data-query="([^"]+)"[\s\S]*?query-id="([^"]+)"/g)) {
    ids.set(m[1] as string, m[2] as string);
  }
  return ids;
}

beforeAll(async () => {
  analytics = await startEngine({ apiKey: API_KEY, events });
  edge = createEdge(
    hostEdgeConfig({
      session,
      backend: engineBackend(analytics.engine, { apiKey: API_KEY }),
      signingKeys: [generateSigningKey()],
      bundle: 'export {};\n',
      log: () => {},
    }),
  );
  app = createHostApp({
    edge,
    session,
    users: await createUserStore(demoUsers(PASSWORD)),
    idTtl: '2m',
    origin: ORIGIN,
  });
});

afterAll(async () => {
  await analytics?.close();
});

describe('sign-in', () => {
  it('serves the login form under a CSP without inline script', async () => {
    const response = await app.request(`${ORIGIN}/login`);
    expect(response.status).toBe(200);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    const page = await response.text();
    expect(page).toContain('<form');
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)/);
  });

  it('refuses a wrong password with 401 and sets no cookie', async () => {
    const response = await signIn('alice@acme', 'wrong password');
    expect(response.status).toBe(401);
    expect(response.headers.get('set-cookie')).toBeNull();
    expect(await response.text()).toContain('do not match');
  });

  it('refuses an unknown login the same way', async () => {
    const response = await signIn('mallory@acme');
    expect(response.status).toBe(401);
  });

  it('starts an HttpOnly, SameSite=Lax session cookie holding a signed JWT', async () => {
    const response = await signIn('alice@acme');
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/dashboard');
    const cookie = response.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^session=[\w-]+\.[\w-]+\.[\w-]+;/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');
    expect(cookie).toContain('Path=/');
    const claims = claimsOf(cookie.slice('session='.length).split(';')[0] ?? '');
    expect(claims).toMatchObject({ sub: 'alice@acme', tenant: 'acme' });
  });

  it('refuses a sign-in form posted from another origin', async () => {
    const response = await app.request(`${ORIGIN}/login`, {
      method: 'POST',
      headers: {
        origin: 'https://evil.example',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ login: 'alice@acme', password: PASSWORD }).toString(),
    });
    expect(response.status).toBe(403);
    expect(response.headers.get('set-cookie')).toBeNull();
  });

  it('checks sign-in posts against its configured origin, not the Host header', async () => {
    // An attacker's page posting to a host reached under its own name: Origin and Host agree, so
    // a check against the request's URL would pass it.
    const response = await app.request('http://evil.example/login', {
      method: 'POST',
      headers: {
        host: 'evil.example',
        origin: 'http://evil.example',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ login: 'alice@acme', password: PASSWORD }).toString(),
    });
    expect(response.status).toBe(403);
    expect(response.headers.get('set-cookie')).toBeNull();
  });

  it('refuses a session cookie signed with another secret', async () => {
    const forged = `session=${(await cookieOf('alice@acme')).split('=')[1]?.slice(0, -4)}AAAA`;
    const response = await app.request(`${ORIGIN}/dashboard`, { headers: { cookie: forged } });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/login');
  });

  it('signs out by expiring the cookie', async () => {
    const cookie = await cookieOf('alice@acme');
    const response = await app.request(`${ORIGIN}/logout`, {
      method: 'POST',
      headers: { cookie, origin: ORIGIN },
    });
    expect(response.status).toBe(303);
    expect(response.headers.get('set-cookie')).toMatch(/^session=;.*Max-Age=0/);
  });
});

describe('dashboard', () => {
  it('sends visitors without a session to the login page', async () => {
    const response = await app.request(`${ORIGIN}/dashboard`);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/login');
  });

  it('mints one short-lived id per chart, bound to the user and their tenant', async () => {
    const ids = await dashboardIds(await cookieOf('bob@globex'));
    expect(ids.size).toBe(DASHBOARD_LAYOUT.length);
    expect([...ids.keys()]).toContain('signup-funnel');
    for (const id of ids.values()) {
      const claims = claimsOf(id);
      expect(claims.sub).toBe('bob@globex');
      expect(claims.p).toEqual({ tenant: 'globex' });
      expect(claims.pub).toBeUndefined();
      expect(Number(claims.exp) - Number(claims.iat)).toBe(120);
    }
  });

  it('renders script files only, the hashed bundle among them', async () => {
    const cookie = await cookieOf('alice@acme');
    const response = await app.request(`${ORIGIN}/dashboard?range=7d`, { headers: { cookie } });
    expect(response.headers.get('cache-control')).toBe('no-store');
    const page = await response.text();
    const scripts = [...page.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
    expect(scripts).toHaveLength(2);
    for (const tag of scripts) expect(tag).toMatch(/src="\/(analytics|assets)\//);
    expect(page).toMatch(/src="\/analytics\/analytics-chart\.[0-9a-f]{16}\.js"/);
    // The chosen range reaches the charts that allow it, and only those.
    expect(page).toMatch(/data-query="events-by-plan"[^>]*range="7d"/);
    expect(page).not.toMatch(/data-query="kpi-events"[^>]*range=/);
  });

  it('opens the default range for an unknown one', async () => {
    const cookie = await cookieOf('alice@acme');
    const response = await app.request(`${ORIGIN}/dashboard?range=1y`, { headers: { cookie } });
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toMatch(/<option value="30d" selected>/);
    expect(page).toMatch(/data-query="events-by-plan"[^>]*range="30d"/);
    expect(page).not.toContain('"1y"');
  });

  it("answers an acme chart with acme's numbers only", async () => {
    const cookie = await cookieOf('alice@acme');
    const ids = await dashboardIds(cookie);
    const response = await app.request(`${ORIGIN}/analytics/api/data`, {
      headers: { cookie, authorization: `Bearer ${ids.get('kpi-events')}` },
    });
    expect(response.status).toBe(200);
    const payload = (await response.json()) as { value: number; compareValue: number };
    const week = 7 * 86_400;
    expect(payload.value).toBe(countEvents(events, 'acme', now - week, now + 60));
    expect(payload.compareValue).toBe(countEvents(events, 'acme', now - 2 * week, now - week));
    // Acme has day + 1 events on each day back: 1 + 2 + … + 7 in the last seven days.
    expect(payload.value).toBe(28);
  });

  it("refuses an acme id in a globex session, and a globex id's data differs", async () => {
    const alice = await cookieOf('alice@acme');
    const bob = await cookieOf('bob@globex');
    const aliceId = (await dashboardIds(alice)).get('kpi-signups');
    const replayed = await app.request(`${ORIGIN}/analytics/api/data`, {
      headers: { cookie: bob, authorization: `Bearer ${aliceId}` },
    });
    expect(replayed.status).toBe(403);
    expect(await replayed.json()).toMatchObject({ code: 'forbidden' });
    const bobId = (await dashboardIds(bob)).get('kpi-signups');
    const own = await app.request(`${ORIGIN}/analytics/api/data`, {
      headers: { cookie: bob, authorization: `Bearer ${bobId}` },
    });
    const payload = (await own.json()) as { value: number };
    expect(payload.value).toBe(countEvents(events, 'globex', now - 7 * 86_400, now + 60, 'signup'));
    expect(payload.value).toBe(0);
  });

  it('answers JSON errors under the edge path and HTML elsewhere', async () => {
    const edgeMiss = await app.request(`${ORIGIN}/analytics/nothing`);
    expect(edgeMiss.status).toBe(404);
    expect(await edgeMiss.json()).toHaveProperty('error');
    const hostMiss = await app.request(`${ORIGIN}/nothing`);
    expect(hostMiss.status).toBe(404);
    expect(hostMiss.headers.get('content-type')).toContain('text/html');
  });
});
