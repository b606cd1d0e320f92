/**
 * Behaviour only a Node host can drive from outside: revocation and key rotation at run time on
 * ids the edge already remembers as verified, the two ready-made session hooks against a real
 * host session endpoint, and CORS for public embeds on any origin.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sign as signJwt } from 'hono/jwt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BUNDLE_PATH } from '../src/adapter/node/bundle-file.ts';
import { nodeEdgeConfig } from '../src/adapter/node/node-edge-config.ts';
import { type ServedEdge, serveEdge } from '../src/adapter/node/serve-edge.ts';
import { kvRevocationCheck } from '../src/adapter/workers/kv-revocation.ts';
import { httpBackend } from '../src/backend/http-backend.ts';
import { createEdge, type Edge } from '../src/create-edge.ts';
import { forwardSession } from '../src/session/forward-session.ts';
import { jwtSession } from '../src/session/jwt-session.ts';
import { generateSigningKey } from '../src/tokens/signing-keys.ts';
import { type AnalyticsBackend, startAnalyticsBackend } from './support/analytics-backend.ts';
import { type FaultProxy, startFaultProxy } from './support/fault-proxy.ts';

const API_KEY = 'node-runtime-key-0123456789';
const queries = {
  total: {
    query: {
      graph_type: 'Single Value',
      start: '1 day ago',
      end: 'now',
      filters: [['tenant', '=', { $param: 'tenant' }]],
    },
    params: { tenant: { from: 'session' as const } },
  },
  open: { query: { graph_type: 'Single Value', start: '1 day ago', end: 'now' } },
};

let backend: AnalyticsBackend;
let proxy: FaultProxy;
const servers: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  backend = await startAnalyticsBackend(API_KEY);
  proxy = await startFaultProxy({ upstream: backend.url });
}, 60_000);

afterAll(async () => {
  for (const server of servers) await server.close();
  await proxy.close();
  await backend.close();
});

async function serve(edge: Edge): Promise<ServedEdge> {
  const served = await serveEdge(edge, { port: 0 });
  servers.push(served);
  return served;
}

function makeEdge(extra: Partial<Parameters<typeof createEdge>[0]> = {}, apiKey = API_KEY) {
  const keys = [generateSigningKey(), generateSigningKey()];
  const edge = createEdge({
    signingKeys: keys,
    backend: httpBackend({ baseUrl: proxy.url, apiKey, retries: 2, backoffMs: 5 }),
    queries,
    log: () => {},
    ...extra,
  });
  return { edge, keys };
}

describe('run-time controls on remembered ids', () => {
  it('a revoked jti stops working at once, even after the id was verified and cached', async () => {
    const { edge } = makeEdge();
    const served = await serve(edge);
    const { id, jti } = await edge.signQueryId({ query: 'open', public: true });
    const get = () =>
      fetch(`${served.url}/api/data`, { headers: { authorization: `Bearer ${id}` } });
    expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(200);
    edge.revoke(jti);
    const refused = await get();
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ code: 'invalid' });
  });

  it('removing a key stops its ids at once; the remaining key keeps working', async () => {
    const { edge, keys } = makeEdge();
    const served = await serve(edge);
    const old = await edge.signQueryId({ query: 'open', public: true });
    const get = (id: string) =>
      fetch(`${served.url}/api/data`, { headers: { authorization: `Bearer ${id}` } });
    expect((await get(old.id)).status).toBe(200);
    // Rotate: a new current key, the old current one removed entirely.
    const fresh = generateSigningKey();
    edge.setSigningKeys([fresh, keys[1] as { kid: string; secret: string }]);
    expect((await get(old.id)).status).toBe(401);
    const renewed = await edge.signQueryId({ query: 'open', public: true });
    expect(
      JSON.parse(Buffer.from(renewed.id.split('.')[0] ?? '', 'base64url').toString()).kid,
    ).toBe(fresh.kid);
    expect((await get(renewed.id)).status).toBe(200);
  });

  it('the embed page remembers verified ids, and still stops them at once on revocation or key removal', async () => {
    const { edge, keys } = makeEdge({
      bundle: 'customElements.define("analytics-chart", class extends HTMLElement {});',
    });
    const served = await serve(edge);
    const page = (id: string) => fetch(`${served.url}/embed/${id}`);
    const revoked = await edge.signQueryId({ query: 'open', public: true });
    expect((await page(revoked.id)).status).toBe(200);
    expect((await page(revoked.id)).status).toBe(200);
    edge.revoke(revoked.jti);
    const refused = await page(revoked.id);
    expect(refused.status).toBe(401);
    expect(await refused.text()).toContain('This chart link is not valid.');
    const rotated = await edge.signQueryId({ query: 'open', public: true });
    expect((await page(rotated.id)).status).toBe(200);
    edge.setSigningKeys([generateSigningKey(), keys[1] as { kid: string; secret: string }]);
    expect((await page(rotated.id)).status).toBe(401);
  });

  it('an isRevoked hook is consulted on every request', async () => {
    const revoked = new Set<string>();
    const { edge } = makeEdge({ isRevoked: (jti) => revoked.has(jti) });
    const served = await serve(edge);
    const { id, jti } = await edge.signQueryId({ query: 'open', public: true });
    const get = () =>
      fetch(`${served.url}/api/data`, { headers: { authorization: `Bearer ${id}` } });
    expect((await get()).status).toBe(200);
    revoked.add(jti);
    expect((await get()).status).toBe(401);
  });

  it('a KV revocation list that cannot be read fails the request with a 502, not open', async () => {
    // Workers KV cannot be made to fail under workerd; this namespace fails the way a KV outage does.
    const failing = {
      get: () => Promise.reject(new Error('KV GET failed: 503 Service Unavailable')),
    };
    const logs: string[] = [];
    const { edge } = makeEdge({
      isRevoked: kvRevocationCheck(failing),
      log: (entry) => logs.push(JSON.stringify(entry)),
    });
    const served = await serve(edge);
    const { id, jti } = await edge.signQueryId({ query: 'open', public: true });
    const response = await fetch(`${served.url}/api/data`, {
      headers: { authorization: `Bearer ${id}` },
    });
    expect(response.status).toBe(502);
    expect(await response.json()).toEqual({
      error: 'This chart could not be checked; try again shortly.',
      code: 'backend',
    });
    const failure = logs.find((l) => l.includes('revocation.check_failed'));
    expect(failure).toContain('KV GET failed');
    expect(logs.join('\n')).not.toContain(jti);
  });
});

describe('a rejected workspace key', () => {
  it('is one backend call, a 502 to the viewer and a loud configuration error in the log, without the key', async () => {
    const wrongKey = 'replaced-workspace-key-0123456789';
    const logs: string[] = [];
    const { edge } = makeEdge({ log: (entry) => logs.push(JSON.stringify(entry)) }, wrongKey);
    const served = await serve(edge);
    const { id } = await edge.signQueryId({ query: 'open', public: true });
    const before = proxy.calls.length;
    const response = await fetch(`${served.url}/api/data`, {
      headers: { authorization: `Bearer ${id}` },
    });
    expect(response.status).toBe(502);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      error: 'The chart service is misconfigured; the site owner has been told.',
      code: 'backend',
    });
    // The real engine refused the key; the edge did not retry (retries: 2 are for outages only).
    expect(proxy.calls.length - before).toBe(1);
    expect(proxy.calls.at(-1)?.body.api_key).toBe(wrongKey);
    const line = logs.find((l) => l.includes('backend.key_rejected'));
    expect(line).toMatch(/CONFIGURATION ERROR.*ANALYTICS_API_KEY/);
    for (const l of logs) expect(l).not.toContain(wrongKey);
    expect(text).not.toContain(wrongKey);
  });
});

describe('session hooks', () => {
  const SECRET = 'host-session-secret-0123456789abcdef';
  let host: Server;
  let hostUrl = '';
  const sessionCalls: (string | undefined)[] = [];

  beforeAll(async () => {
    // The host app's session endpoint: `sid=alice-acme` is alice of acme; anything else is nobody.
    host = createServer((req, res) => {
      sessionCalls.push(req.headers.cookie);
      const sid = /(?:^|;\s*)sid=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
      const known: Record<string, unknown> = {
        'alice-acme': { subject: 'alice', tenant: 'acme' },
        'bob-globex': { subject: 'bob', tenant: 'globex' },
        broken: { tenant: 'acme' },
      };
      if (sid === 'down') {
        res.writeHead(500);
        res.end();
        return;
      }
      const session = sid ? known[sid] : undefined;
      res.writeHead(session ? 200 : 401, { 'content-type': 'application/json' });
      res.end(JSON.stringify(session ?? { error: 'not signed in' }));
    });
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    hostUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}/session`;
    servers.push({ close: () => new Promise((resolve) => host.close(() => resolve())) });
  });

  it('forwardSession asks the host with the cookie and signs for the answered tenant', async () => {
    const { edge } = makeEdge({ authorize: forwardSession({ url: hostUrl, cookies: ['sid'] }) });
    const served = await serve(edge);
    const sign = (cookie: string) =>
      fetch(`${served.url}/api/sign`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie },
        body: JSON.stringify({ query: 'total' }),
      });
    const before = proxy.calls.length;
    const signed = await sign('sid=alice-acme; theme=dark');
    expect(signed.status).toBe(200);
    expect(sessionCalls.at(-1)).toBe('sid=alice-acme');
    const { id } = (await signed.json()) as { id: string };
    const read = (cookie?: string) =>
      fetch(`${served.url}/api/data`, {
        headers: { authorization: `Bearer ${id}`, ...(cookie ? { cookie } : {}) },
      });
    expect((await read('sid=alice-acme')).status).toBe(200);
    expect(proxy.calls.at(-1)?.body.filters).toEqual([['tenant', '=', 'acme']]);
    expect((await read('sid=bob-globex')).status).toBe(403);
    expect((await read('sid=nobody')).status).toBe(401);
    expect((await read()).status).toBe(401);
    expect((await sign('sid=nobody')).status).toBe(401);
    // A session endpoint that fails or answers nonsense is not "signed out": it is a 502.
    expect((await sign('sid=down')).status).toBe(502);
    expect((await sign('sid=broken')).status).toBe(502);
    expect(proxy.calls.length - before).toBe(1);
  });

  it('never takes the query id in the Bearer header for a session, even with a shared secret', async () => {
    // A misconfiguration on purpose: the host's session secret is also the edge's signing secret.
    const shared = generateSigningKey();
    const edge = createEdge({
      signingKeys: [shared],
      backend: httpBackend({ baseUrl: proxy.url, apiKey: API_KEY }),
      queries,
      authorize: jwtSession({ secret: shared.secret }),
      log: () => {},
    });
    const { id } = await edge.signQueryId({ query: 'open', subject: 'alice' });
    const alone = await edge.app.request('/api/data', {
      headers: { authorization: `Bearer ${id}` },
    });
    expect(alone.status).toBe(401);
    const exp = Math.floor(Date.now() / 1000) + 600;
    const cookie = `session=${await signJwt({ sub: 'alice', exp }, shared.secret)}`;
    const withSession = await edge.app.request('/api/data', {
      headers: { authorization: `Bearer ${id}`, cookie },
    });
    expect(withSession.status).toBe(200);
  });

  it('jwtSession reads the cookie or a Bearer header, checks expiry and the secret', async () => {
    const { edge } = makeEdge({ authorize: jwtSession({ secret: SECRET }) });
    const served = await serve(edge);
    const exp = Math.floor(Date.now() / 1000) + 600;
    const good = await signJwt({ sub: 'alice', tenant: 'acme', exp }, SECRET);
    const expired = await signJwt({ sub: 'alice', tenant: 'acme', exp: exp - 1200 }, SECRET);
    const forged = await signJwt(
      { sub: 'alice', tenant: 'acme', exp },
      'another-secret-0123456789abcdef0123',
    );
    const noExp = await signJwt({ sub: 'alice', tenant: 'acme' }, SECRET);
    const sign = (headers: Record<string, string>) =>
      fetch(`${served.url}/api/sign`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query: 'total' }),
      });
    expect((await sign({ cookie: `session=${good}` })).status).toBe(200);
    expect((await sign({ authorization: `Bearer ${good}` })).status).toBe(200);
    for (const token of [expired, forged, noExp, 'garbage']) {
      expect((await sign({ cookie: `session=${token}` })).status).toBe(401);
    }
  });
});

describe('nodeEdgeConfig', () => {
  it('opens the engine in process when no service URL is set, and uses HTTP when one is', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'edge-in-process-'));
    const key = generateSigningKey();
    const env = {
      ANALYTICS_API_KEY: 'in-process-key-0123456789',
      ANALYTICS_DATA_DIR: dataDir,
      EDGE_SIGNING_KEYS: `${key.kid}:${key.secret}`,
    };
    const local = await nodeEdgeConfig({ queries, log: () => {} }, env);
    try {
      expect(local.backend).toBe('in-process');
      expect(existsSync(join(dataDir, 'default.duckdb'))).toBe(true);
      const edge = createEdge(local.config);
      const { id } = await edge.signQueryId({ query: 'open', public: true });
      const response = await edge.app.request('/api/data', {
        headers: { authorization: `Bearer ${id}` },
      });
      expect(response.status).toBe(200);
      // An empty workspace: the real engine counts nothing.
      expect(await response.json()).toMatchObject({ graph: 'Single Value', value: 0 });
      // The bundle defaults to the element's build in this monorepo, when it has been built.
      const bundle = await edge.app.request('/analytics-chart.js');
      if (existsSync(DEFAULT_BUNDLE_PATH)) {
        expect(bundle.status).toBe(200);
        expect(new Uint8Array(await bundle.arrayBuffer())).toEqual(
          new Uint8Array(readFileSync(DEFAULT_BUNDLE_PATH)),
        );
      } else {
        expect(bundle.status).toBe(404);
      }
    } finally {
      await local.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
    const remote = await nodeEdgeConfig({ queries }, { ...env, ANALYTICS_BASE_URL: proxy.url });
    expect(remote.backend).toBe('http');
    expect(remote.config.backend.secrets).toEqual(['in-process-key-0123456789']);
  });
});

describe('CORS for public embeds', () => {
  it("'*' lets any origin read data without credentials, and only listed origins sign", async () => {
    const { edge } = makeEdge({ allowedOrigins: ['https://app.example.com', '*'] });
    const served = await serve(edge);
    const { id } = await edge.signQueryId({ query: 'open', public: true });
    const blog = await fetch(`${served.url}/api/data`, {
      headers: { authorization: `Bearer ${id}`, origin: 'https://blog.example.org' },
    });
    expect(blog.status).toBe(200);
    expect(blog.headers.get('access-control-allow-origin')).toBe('*');
    expect(blog.headers.get('access-control-allow-credentials')).toBeNull();
    const app = await fetch(`${served.url}/api/data`, {
      headers: { authorization: `Bearer ${id}`, origin: 'https://app.example.com' },
    });
    expect(app.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(app.headers.get('access-control-allow-credentials')).toBe('true');
    const preflight = await fetch(`${served.url}/api/sign`, {
      method: 'OPTIONS',
      headers: { origin: 'https://blog.example.org', 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
  });
});
