/**
 * The embed studio's page and JSON API on a real socket, its engine in process (DuckDB really
 * queried): who may open it (the studio rule and each definition's signers rule), what it
 * mints and records, tenant isolation against a valid session of another tenant, and bad input.
 */
import { type EngineWithEvents, startEngine } from '@analytics-chart/test-kit/engine';
import {
  dailyEvents,
  SESSION_TENANT,
  SIGNER_TENANT,
  TENANT_FILTER,
  WEEK_AND_MONTH,
} from '@analytics-chart/test-kit/queries';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveEdge } from '../src/adapter/node/serve-edge.ts';
import { engineBackend } from '../src/backend/engine-backend.ts';
import { parseJsonServeConfig } from '../src/cli/serve-config.ts';
import { createEdge, type Edge } from '../src/create-edge.ts';
import type { QueryDefinition } from '../src/registry/query-definition.ts';
import type { Session } from '../src/session/session.ts';
import { generateSigningKey } from '../src/tokens/signing-keys.ts';

const API_KEY = `canary-${crypto.randomUUID()}-key`;
const SIGNING_KEY = generateSigningKey();
const BLOG = 'https://blog.example';
const NOW = Math.floor(Date.now() / 1000);

const QUERIES: Record<string, QueryDefinition> = {
  // Public embeds: the tenant is a signer parameter, which the studio locks to the session's.
  'public-signups': {
    ...dailyEvents({ title: 'Signups per day', filters: [TENANT_FILTER], params: SIGNER_TENANT }),
    ranges: WEEK_AND_MONTH,
  },
  // The tenant from the session, and a signer choice with an enum.
  'events-by-kind': dailyEvents({
    title: 'Events of a kind',
    filters: [TENANT_FILTER, ['event', '=', { $param: 'kind' }]],
    params: { ...SESSION_TENANT, kind: { from: 'signer', enum: ['signup', 'login'] } as never },
  }),
  // Only editors may publish it.
  'editors-only': {
    ...dailyEvents({ title: 'Editors only', filters: [TENANT_FILTER], params: SESSION_TENANT }),
    signers: { claims: { role: ['editor'] } },
  },
  // No tenant parameter at all: ownership alone keeps tenants apart.
  'all-signups': dailyEvents({ title: 'Signups everywhere' }),
  // In the registry, but not offered by the studio rule.
  'dashboard-only': dailyEvents({
    title: 'Dashboard only',
    filters: [TENANT_FILTER],
    params: SESSION_TENANT,
  }),
};

const events = [
  ...Array.from({ length: 3 }, (_, i) => ({
    timestamp: NOW - 3600 - i,
    json: { tenant: 'acme', event: 'signup' },
  })),
  ...Array.from({ length: 5 }, (_, i) => ({
    timestamp: NOW - 3600 - i,
    json: { tenant: 'globex', event: 'signup' },
  })),
];

/** The test's sessions: headers stand in for the host's cookie. */
const SESSIONS: Record<string, Session> = {
  alice: { subject: 'alice@acme', tenant: 'acme', role: 'editor' },
  ann: { subject: 'ann@acme', tenant: 'acme', role: 'author' },
  bob: { subject: 'bob@globex', tenant: 'globex', role: 'editor' },
  // A subject spelt like the registry's own minters must not see their ids.
  server: { subject: 'server', tenant: 'acme', role: 'editor' },
  guest: { subject: 'guest@acme', tenant: 'acme', role: 'guest' },
  // The same subject string in another tenant (hosts need not make subjects unique across tenants).
  twin: { subject: 'alice@acme', tenant: 'globex', role: 'editor' },
};

let analytics: EngineWithEvents;
let edge: Edge;
let base: string;
let close: () => Promise<void>;
const logs: string[] = [];

beforeAll(async () => {
  analytics = await startEngine({ apiKey: API_KEY, events });
  edge = createEdge({
    signingKeys: [SIGNING_KEY],
    backend: engineBackend(analytics.engine, { apiKey: API_KEY }),
    queries: QUERIES,
    authorize: (c) => SESSIONS[c.req.header('x-user') ?? ''] ?? null,
    studio: {
      allow: (session) => session.role !== 'guest',
      queries: ['public-signups', 'events-by-kind', 'editors-only', 'all-signups'],
    },
    publicUrl: 'https://app.example/analytics',
    bundle: 'customElements.define("analytics-chart", class extends HTMLElement {});',
    allowedOrigins: ['*'],
    log: (entry) => logs.push(JSON.stringify(entry)),
  });
  const served = await serveEdge(edge, { port: 0, hostname: '127.0.0.1', basePath: '/analytics' });
  base = served.url;
  close = served.close;
});

afterAll(async () => {
  await close?.();
  await analytics?.close();
});

function call(path: string, user?: string, body?: unknown, headers: Record<string, string> = {}) {
  return fetch(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      ...(user ? { 'x-user': user } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
}

interface Minted {
  jti: string;
  url: string;
  snippets: { place: string; who: string; text: string }[];
}

async function mint(user: string, body: Record<string, unknown>): Promise<Minted> {
  const response = await call('/api/studio/embeds', user, {
    query: 'public-signups',
    label: 'Home page',
    ttl: '30d',
    ...body,
  });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as Minted;
}

/** The public id inside the minted embed URL. */
const idOf = (minted: Minted) =>
  decodeURIComponent(new URL(minted.url).pathname.split('/').pop() ?? '');

const data = (id: string, origin?: string) =>
  fetch(`${base}/api/data`, {
    headers: { authorization: `Bearer ${id}`, ...(origin ? { origin } : {}) },
  });

async function listed(user: string) {
  const response = await call('/api/studio/embeds', user);
  expect(response.status).toBe(200);
  return ((await response.json()) as { items: Record<string, unknown>[] }).items;
}

describe('the studio rule', () => {
  it('answers 401 without a session and 403 to a session the rule refuses, page and API', async () => {
    for (const path of ['/studio', '/api/studio/charts', '/api/studio/embeds']) {
      const anonymous = await call(path);
      expect(anonymous.status).toBe(401);
      const guest = await call(path, 'guest');
      expect(guest.status).toBe(403);
      expect(await guest.text()).not.toContain('Home page');
    }
    const page = await call('/studio');
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('Sign in');
  });

  it('offers the queries of the rule that the session may sign, the tenant locked to its own', async () => {
    const charts = async (user: string) =>
      (
        (await (await call('/api/studio/charts', user)).json()) as {
          charts: { name: string; params: { name: string; locked: boolean; value?: unknown }[] }[];
        }
      ).charts;
    const alice = await charts('alice');
    expect(alice.map((c) => c.name)).toEqual([
      'public-signups',
      'events-by-kind',
      'editors-only',
      'all-signups',
    ]);
    expect(alice[0]?.params).toEqual([
      expect.objectContaining({ name: 'tenant', locked: true, value: 'acme' }),
    ]);
    expect(alice[1]?.params).toEqual([
      expect.objectContaining({ name: 'tenant', locked: true, value: 'acme' }),
      expect.objectContaining({ name: 'kind', locked: false, enum: ['signup', 'login'] }),
    ]);
    // An author is not an editor: the definition's own signers rule hides it.
    expect((await charts('ann')).map((c) => c.name)).toEqual([
      'public-signups',
      'events-by-kind',
      'all-signups',
    ]);
    const bob = await charts('bob');
    expect(bob[0]?.params[0]).toEqual(expect.objectContaining({ value: 'globex' }));
  });

  it('will not start without a public URL or with a query the registry lacks', () => {
    const config = {
      signingKeys: [SIGNING_KEY],
      backend: engineBackend(analytics.engine, { apiKey: API_KEY }),
      queries: QUERIES,
      authorize: () => null,
      studio: { allow: () => true },
    };
    expect(() => createEdge(config)).toThrow(/studio needs publicUrl/);
    expect(() =>
      createEdge({
        ...config,
        publicUrl: 'https://app.example',
        studio: { allow: () => true, queries: ['nope'] },
      }),
    ).toThrow(/no query named 'nope'/);
  });
});

describe('the studio in a JSON config (analytics-edge serve)', () => {
  it('reads subjects and queries, and refuses a misspelt key', () => {
    const config = parseJsonServeConfig({
      queries: {},
      studio: { subjects: ['alice@acme'], queries: ['public-signups'] },
    });
    expect(config.studioRule).toEqual({ subjects: ['alice@acme'], queries: ['public-signups'] });
    expect(parseJsonServeConfig({ queries: {}, studio: { subjects: '*' } }).studioRule).toEqual({
      subjects: '*',
    });
    expect(() => parseJsonServeConfig({ queries: {}, studio: { subject: ['a'] } })).toThrow(
      /studio/,
    );
  });
});

describe('the studio page', () => {
  it('is static HTML under a strict CSP, with no inline script and no secret', async () => {
    const page = await call('/studio', 'alice');
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-(inline|eval)/);
    const html = await page.text();
    // Every script has a src: nothing inline for a nonce or hash to cover.
    expect(html.match(/<script[^>]*>/g)?.every((tag) => tag.includes(' src='))).toBe(true);
    expect(html).toMatch(/src="analytics-chart\.[0-9a-f]{16}\.js"/);
    const script = await (await call('/studio.js', 'alice')).text();
    expect(script).toContain("fetch('api/studio/'");
    expect(script).not.toMatch(/innerHTML|insertAdjacentHTML|eval\(|new Function/);
    const css = await call('/studio.css');
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    for (const text of [html, script, await css.text()]) {
      expect(text).not.toContain(SIGNING_KEY.secret);
      expect(text).not.toContain(API_KEY);
    }
  });
});

describe('minting, listing and revoking', () => {
  it('mints a public id with label, expiry and sites, records it, and hands out its snippets', async () => {
    const minted = await mint('alice', {
      aud: [BLOG],
      ttl: '7d',
      options: { theme: 'dark', height: 320, range: '7d', locale: 'de-CH', refresh: 30 },
    });
    const id = idOf(minted);
    const [, payload] = id.split('.');
    const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8'));
    expect(claims).toMatchObject({
      q: 'public-signups',
      p: { tenant: 'acme' },
      pub: true,
      aud: BLOG,
    });
    expect(claims.exp - claims.iat).toBe(7 * 86_400);
    expect(minted.snippets.map((s) => s.place)).toEqual([
      'WordPress (any block editor post)',
      'Custom HTML (WordPress Custom HTML block, other CMSs)',
      'A page with the script',
      'Markdown',
    ]);
    expect(minted.snippets[0]?.text).toBe(minted.url);
    expect(minted.snippets[0]?.who).toMatch(/Contributor to Administrator/);
    // Limited to sites: the WordPress label says where it draws.
    expect(minted.snippets[0]?.who).toMatch(/sandboxed frame/);
    expect(minted.snippets[1]?.text).toMatch(
      /^<iframe src="https:\/\/app\.example\/analytics\/embed\//,
    );
    expect(minted.snippets[1]?.who).toMatch(/unfiltered_html.*Administrators, and Editors/);
    expect(minted.snippets[2]?.text).toContain('refresh="30"');
    expect(minted.snippets[2]?.text).toContain('theme="dark" height="320" locale="de-CH"');
    expect(minted.snippets[3]?.text).toBe(`[Signups per day](${minted.url})`);

    // The id draws acme's numbers on the blog and nowhere else.
    const onBlog = await data(id, BLOG);
    expect(onBlog.status).toBe(200);
    const chart = (await onBlog.json()) as { series: { values: number[] }[] };
    expect(chart.series[0]?.values.reduce((a, b) => a + b, 0)).toBe(3);
    expect((await data(id, 'https://elsewhere.example')).status).toBe(403);

    const mine = await listed('alice');
    expect(mine[0]).toMatchObject({
      jti: minted.jti,
      label: 'Home page',
      query: 'public-signups',
      aud: BLOG,
      views: 1,
    });
    expect(mine[0]).not.toHaveProperty('mintedBy');
    expect((await edge.store.get(minted.jti))?.mintedBy).toBe('studio@acme:alice@acme');
  });

  it('fills session parameters from the session and checks the signer ones', async () => {
    const minted = await mint('bob', { query: 'events-by-kind', params: { kind: 'signup' } });
    expect(minted.snippets[0]?.who).not.toMatch(/sandboxed/);
    const response = await data(idOf(minted));
    const chart = (await response.json()) as { series: { values: number[] }[] };
    expect(chart.series[0]?.values.reduce((a, b) => a + b, 0)).toBe(5);
    const wrong = await call('/api/studio/embeds', 'bob', {
      query: 'events-by-kind',
      params: { kind: 'purchase' },
      label: 'x',
      ttl: '7d',
    });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: string }).error).toMatch(/one of "signup", "login"/);
  });

  it('previews with a session-bound id that only the same session can read, and lists nothing', async () => {
    const before = (await listed('ann')).length;
    const response = await call('/api/studio/preview', 'ann', { query: 'public-signups' });
    expect(response.status).toBe(200);
    const { id } = (await response.json()) as { id: string };
    const mine = await fetch(`${base}/api/data`, {
      headers: { authorization: `Bearer ${id}`, 'x-user': 'ann' },
    });
    expect(mine.status).toBe(200);
    expect((await data(id)).status).toBe(401);
    expect((await listed('ann')).length).toBe(before);
  });

  it('revokes at once: the id is refused on the data route and the list says when', async () => {
    const minted = await mint('alice', { label: 'To revoke' });
    const id = idOf(minted);
    expect((await data(id)).status).toBe(200);
    const revoked = await call(`/api/studio/embeds/${minted.jti}/revoke`, 'alice', {});
    expect(revoked.status).toBe(200);
    expect((await data(id)).status).toBe(401);
    const entry = (await listed('alice')).find((e) => e.jti === minted.jti);
    expect(entry?.revokedAt).toEqual(expect.any(String));
  });
});

describe('tenant isolation: a valid session of another tenant', () => {
  it('sees none of the other tenant’s embeds and revokes none of them', async () => {
    const minted = await mint('alice', { label: 'Alice’s chart' });
    for (const user of ['bob', 'server', 'ann', 'twin']) {
      expect((await listed(user)).map((e) => e.jti)).not.toContain(minted.jti);
      const attempt = await call(`/api/studio/embeds/${minted.jti}/revoke`, user, {});
      expect(attempt.status).toBe(404);
    }
    expect((await data(idOf(minted))).status).toBe(200);
    expect(edge.store.isRevoked(minted.jti)).toBe(false);
  });

  it('keeps a chart without a tenant parameter apart from the same subject in another tenant', async () => {
    const minted = await mint('alice', { query: 'all-signups', label: 'Everywhere' });
    expect((await listed('alice')).map((e) => e.jti)).toContain(minted.jti);
    expect((await listed('twin')).map((e) => e.jti)).not.toContain(minted.jti);
    const attempt = await call(`/api/studio/embeds/${minted.jti}/revoke`, 'twin', {});
    expect(attempt.status).toBe(404);
    expect(edge.store.isRevoked(minted.jti)).toBe(false);
    const twins = await mint('twin', { query: 'all-signups', label: 'Twin’s' });
    expect((await listed('alice')).map((e) => e.jti)).not.toContain(twins.jti);
  });

  it('still lists an old embed after thousands of newer ids by others', async () => {
    const old = await mint('ann', { label: 'Before the crowd' });
    const stored = await edge.store.get(old.jti);
    const later = Date.parse(stored?.issuedAt ?? '') + 1000;
    for (let i = 0; i < 2500; i++) {
      await edge.store.record({
        ...(stored as NonNullable<typeof stored>),
        jti: `crowd-${String(i).padStart(5, '0')}`,
        mintedBy: 'cli',
        issuedAt: new Date(later + i).toISOString(),
      });
    }
    expect((await listed('ann')).map((e) => e.jti)).toContain(old.jti);
  });

  it('cannot sign outside its rules: another tenant, a session parameter, a chart not offered', async () => {
    const cases: [string, unknown, number][] = [
      [
        'embeds',
        { query: 'public-signups', params: { tenant: 'acme' }, label: 'x', ttl: '7d' },
        403,
      ],
      ['preview', { query: 'public-signups', params: { tenant: 'acme' } }, 403],
      [
        'embeds',
        {
          query: 'events-by-kind',
          params: { tenant: 'acme', kind: 'signup' },
          label: 'x',
          ttl: '7d',
        },
        400,
      ],
      ['embeds', { query: 'dashboard-only', label: 'x', ttl: '7d' }, 404],
      ['preview', { query: 'editors-only' }, 403],
    ];
    for (const [path, body, status] of cases) {
      const user =
        path === 'preview' && (body as { query: string }).query === 'editors-only' ? 'ann' : 'bob';
      const response = await call(`/api/studio/${path}`, user, body);
      expect(response.status, JSON.stringify(body)).toBe(status);
      const answer = (await response.json()) as { error: string };
      expect(answer.error).toEqual(expect.any(String));
      expect(JSON.stringify(answer)).not.toContain('acme');
    }
  });
});

describe('bad input', () => {
  const good = { query: 'public-signups', label: 'Fine', ttl: '30d' };
  const cases: [
    string,
    string | Record<string, unknown>,
    number,
    RegExp,
    Record<string, string>?,
  ][] = [
    ['not JSON', '{"query":', 400, /not valid JSON/],
    [
      'a form post',
      'query=public-signups',
      415,
      /application\/json/,
      { 'content-type': 'application/x-www-form-urlencoded' },
    ],
    ['an unknown field', { ...good, admin: true }, 400, /admin/],
    ['no label', { query: 'public-signups', ttl: '30d' }, 400, /label/],
    ['a label with markup', { ...good, label: '<img src=x onerror=alert(1)>' }, 400, /label/],
    ['a label with a control character', { ...good, label: 'a\u0007b' }, 400, /label/],
    [
      'a site that is not an origin',
      { ...good, aud: ['https://blog.example/path'] },
      400,
      /origin/,
    ],
    ['too long a life', { ...good, ttl: '999d' }, 400, /366 days/],
    ['a made-up lifetime', { ...good, ttl: 'forever' }, 400, /ttl/],
    ['an unknown range', { ...good, options: { range: '1y' } }, 400, /range/],
    [
      'an unknown parameter',
      { ...good, params: { __proto__x: 1 } },
      400,
      /not one this chart takes/,
    ],
    ['a height out of bounds', { ...good, options: { height: 5 } }, 400, /height/],
    ['a locale that is none', { ...good, options: { locale: 'not a locale!' } }, 400, /locale/],
    ['an oversized body', { ...good, label: 'x'.repeat(20_000) }, 413, /larger than/],
  ];
  for (const [what, body, status, message, headers] of cases) {
    it(`refuses ${what} with a JSON ${status}`, async () => {
      const response = await call('/api/studio/embeds', 'alice', body, headers);
      expect(response.status).toBe(status);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const answer = (await response.json()) as { error: string };
      expect(answer.error).toMatch(message);
      expect(answer.error).not.toMatch(/at .*\.ts|stack/i);
    });
  }

  it('refuses a hostile jti, a revoke without JSON, and methods the routes do not serve', async () => {
    expect((await call('/api/studio/embeds/..%2F..%2Fadmin/revoke', 'alice', {})).status).toBe(400);
    expect((await call('/api/studio/embeds/x%27%3B--/revoke', 'alice', {})).status).toBe(400);
    const form = await fetch(`${base}/api/studio/embeds/abcdefghijkl/revoke`, {
      method: 'POST',
      headers: { 'x-user': 'alice', 'content-type': 'text/plain' },
    });
    expect(form.status).toBe(415);
    const put = await fetch(`${base}/api/studio/embeds`, {
      method: 'PUT',
      headers: { 'x-user': 'alice' },
    });
    expect(put.status).toBe(405);
  });

  it('wrote no secret into any log line', () => {
    for (const line of logs) {
      expect(line).not.toContain(SIGNING_KEY.secret);
      expect(line).not.toContain(API_KEY);
    }
  });
});
