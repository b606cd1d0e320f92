/**
 * The Workers edge's shared state, under workerd. Rate limits across a Worker's isolates: two
 * copies of the edge (as two isolates of one deployment would be), each on its own socket, share
 * the Durable Object limiter bound as `EDGE_RATE_LIMITER`. Without the binding each copy keeps
 * its own buckets (the control); with a limiter that is down, requests go through and the edge
 * says so in its log. Revocation through the KV namespace `EDGE_REVOCATIONS`, read by both
 * copies. A binding of the wrong kind is a configuration error that names it.
 */

import { captureLines } from '@analytics-chart/test-kit/workerd';
import { sign as signJwt } from 'hono/jwt';
import { Miniflare, type WorkerOptions } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileRegistry } from '../src/registry/compile-definition.ts';
import { Keyring } from '../src/tokens/keyring.ts';
import { createQuerySigner } from '../src/tokens/query-signer.ts';
import { type AnalyticsBackend, startAnalyticsBackend } from './support/analytics-backend.ts';
import { bundleTestWorker } from './support/harness.ts';
import { TEST_LIMITS, TEST_QUERIES } from './support/test-config.ts';

const hex = (n: number) =>
  Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) =>
    b.toString(16).padStart(2, '0'),
  ).join('');

const KEY = `canary-${hex(16)}`;
const SESSION_SECRET = hex(24);
const signing = { kid: 'current', secret: hex(24) };
const signer = createQuerySigner(new Keyring([signing]), compileRegistry(TEST_QUERIES), {
  sessionTtl: 600,
  maxSessionTtl: 3600,
  publicTtl: 86_400,
});

let backend: AnalyticsBackend;
let script: string;
const running: Miniflare[] = [];

beforeAll(async () => {
  backend = await startAnalyticsBackend(KEY);
  script = await bundleTestWorker();
}, 60_000);

afterAll(async () => {
  await Promise.all(running.map((mf) => mf.dispose()));
  await backend?.close();
});

interface IsolateOptions {
  /** The class behind `EDGE_RATE_LIMITER` (defined by `a`, used by both), or none. */
  limiter?: 'RateLimiterObject' | 'UnavailableRateLimiter';
  /** Binds the KV namespace `EDGE_REVOCATIONS` (shared by both). */
  revocations?: boolean;
  /** Binds the D1 database `EDGE_REGISTRY` (shared by both). */
  registry?: boolean;
  /** Further text bindings, e.g. a binding of the wrong kind. */
  bindings?: Record<string, string>;
}

/** Two isolates of one Worker, `a` and `b`, each with its own socket. */
async function twoIsolates(options: IsolateOptions = {}) {
  const logs: string[] = [];
  const worker = (name: string): WorkerOptions => ({
    name,
    modules: true,
    script,
    compatibilityDate: '2025-01-01',
    bindings: {
      ANALYTICS_API_KEY: KEY,
      ANALYTICS_BASE_URL: backend.url,
      ANALYTICS_RETRIES: '0',
      EDGE_SIGNING_KEYS: `${signing.kid}:${signing.secret}`,
      SESSION_SECRET,
      ...options.bindings,
    },
    durableObjects: options.limiter
      ? { EDGE_RATE_LIMITER: { className: options.limiter, scriptName: 'a' } }
      : undefined,
    kvNamespaces: options.revocations ? { EDGE_REVOCATIONS: 'revocations' } : undefined,
    d1Databases: options.registry ? { EDGE_REGISTRY: 'registry' } : undefined,
    unsafeDirectSockets: [{ host: '127.0.0.1', port: 0 }],
  });
  const mf = new Miniflare({
    workers: [worker('a'), worker('b')],
    handleRuntimeStdio: captureLines(logs),
  });
  running.push(mf);
  await mf.ready;
  const urls = [await mf.unsafeGetDirectURL('a'), await mf.unsafeGetDirectURL('b')];
  const ip = `10.9.0.${Math.floor(Math.random() * 250) + 1}`;
  /** Isolate `i`'s answer to `path` (below the mount), from the test's one client address. */
  const call = async (i: number, path: string, init: RequestInit = {}) => {
    const response = await fetch(new URL(`analytics/${path}`, urls[i]), {
      ...init,
      headers: { 'x-forwarded-for': ip, ...(init.headers as Record<string, string>) },
    });
    return { status: response.status, body: await response.text() };
  };
  /** GETs the data route of isolate `i` with `id` (and `headers`). */
  const data = (i: number, id: string, headers: Record<string, string> = {}) =>
    call(i, 'api/data', { headers: { authorization: `Bearer ${id}`, ...headers } });
  return { mf, data, call, logs };
}

async function signPublic() {
  const tenant = `t-${hex(4)}`;
  return signer.sign({ query: 'public-total', params: { tenant }, public: true });
}

async function publicId(): Promise<string> {
  return (await signPublic()).id;
}

/** Alternates requests between the two isolates until `count` have been sent; returns the statuses. */
async function alternate(
  data: (i: number, id: string) => Promise<{ status: number }>,
  id: string,
  count: number,
) {
  const statuses: number[] = [];
  for (let n = 0; n < count; n++) statuses.push((await data(n % 2, id)).status);
  return statuses;
}

describe('rate limits across isolates (workerd, Durable Object)', () => {
  const burst = TEST_LIMITS.perId.burst;

  it('without a shared limiter, each isolate keeps its own bucket (the control)', async () => {
    const { data } = await twoIsolates();
    const statuses = await alternate(data, await publicId(), 2 * burst + 2);
    // Each isolate allows a whole burst of its own: twice the limit in all.
    expect(statuses.filter((s) => s === 200)).toHaveLength(2 * burst);
    expect(statuses.slice(-2)).toEqual([429, 429]);
  }, 60_000);

  it('with EDGE_RATE_LIMITER, both isolates draw from one bucket', async () => {
    const { data } = await twoIsolates({ limiter: 'RateLimiterObject' });
    const id = await publicId();
    const statuses = await alternate(data, id, 2 * burst);
    expect(statuses.slice(0, burst)).toEqual(Array(burst).fill(200));
    expect(statuses.slice(burst)).toEqual(Array(burst).fill(429));
    const refused = await data(1, id);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'rate_limited' });
    // Another id has a bucket of its own, on either isolate.
    const other = await publicId();
    expect((await data(1, other)).status).toBe(200);
    expect((await data(0, other)).status).toBe(200);
  }, 60_000);

  it('a limiter that is down lets requests through, and the log says so without the key', async () => {
    const { data, logs } = await twoIsolates({ limiter: 'UnavailableRateLimiter' });
    const statuses = await alternate(data, await publicId(), burst + 4);
    expect(statuses).toEqual(Array(burst + 4).fill(200));
    await expect.poll(() => logs.some((l) => l.includes('edge.rate_limiter'))).toBe(true);
    const warnings = logs.filter((l) => l.includes('edge.rate_limiter'));
    expect(warnings[0]).toContain('503');
    for (const line of logs) {
      expect(line).not.toContain(KEY);
      expect(line).not.toContain('10.9.0.');
    }
  }, 60_000);
});

describe('revocation through KV (workerd)', () => {
  it('an id whose jti is put in EDGE_REVOCATIONS is refused by every isolate', async () => {
    const { mf, data } = await twoIsolates({ revocations: true });
    const revoked = await signPublic();
    const kept = await signPublic();
    expect((await data(0, revoked.id)).status).toBe(200);
    expect((await data(1, revoked.id)).status).toBe(200);
    // Miniflare types the namespace with Workers types this package does not install.
    const kv = (await mf.getKVNamespace('EDGE_REVOCATIONS', 'a')) as unknown as {
      put(key: string, value: string): Promise<void>;
    };
    await kv.put(revoked.jti, 'revoked');
    for (const i of [0, 1]) {
      const refused = await data(i, revoked.id);
      expect(refused.status).toBe(401);
      expect(JSON.parse(refused.body)).toMatchObject({ code: 'invalid' });
      expect((await data(i, kept.id)).status).toBe(200);
    }
  }, 60_000);
});

describe('revocation through the D1 registry (workerd)', () => {
  it('an id revoked through one isolate is refused by the other within a second, without KV', async () => {
    // No KV namespace: only D1 can carry the revocation from `a` to `b`.
    const { data, call } = await twoIsolates({ registry: true });
    const session = await signJwt(
      { sub: 'root', tenant: 'acme', role: 'admin', exp: Math.floor(Date.now() / 1000) + 600 },
      SESSION_SECRET,
    );
    const headers = { cookie: `session=${session}`, 'content-type': 'application/json' };
    const mint = async () => {
      const signed = await call(0, 'api/sign', {
        method: 'POST',
        headers,
        body: JSON.stringify({ query: 'tenant-daily' }),
      });
      expect(signed.status, signed.body).toBe(200);
      const { id } = JSON.parse(signed.body) as { id: string };
      const claims = JSON.parse(Buffer.from(id.split('.')[1] ?? '', 'base64url').toString());
      return { id, jti: String(claims.jti) };
    };
    const revoked = await mint();
    const kept = await mint();
    // Both isolates serve it, and `b` now remembers "not revoked".
    expect((await data(0, revoked.id, headers)).status).toBe(200);
    expect((await data(1, revoked.id, headers)).status).toBe(200);
    const revoke = await call(0, `api/admin/ids/${revoked.jti}/revoke`, {
      method: 'POST',
      headers,
    });
    expect(revoke.status, revoke.body).toBe(200);
    const revokedAt = Date.now();
    expect((await data(0, revoked.id, headers)).status).toBe(401);
    let seenAfter = Number.POSITIVE_INFINITY;
    while (Date.now() - revokedAt < 3000) {
      const answer = await data(1, revoked.id, headers);
      if (answer.status === 401) {
        expect(JSON.parse(answer.body)).toMatchObject({ code: 'invalid' });
        seenAfter = Date.now() - revokedAt;
        break;
      }
      expect(answer.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(seenAfter).toBeLessThan(1000);
    expect((await data(1, kept.id, headers)).status).toBe(200);
    // The registry shows it revoked, on either isolate.
    const shown = await call(1, `api/admin/ids/${revoked.jti}`, { headers });
    expect(JSON.parse(shown.body)).toMatchObject({ revokedAt: expect.stringMatching(/^\d{4}-/) });
  }, 60_000);
});

describe('bindings of the wrong kind (workerd)', () => {
  for (const name of ['EDGE_RATE_LIMITER', 'EDGE_REVOCATIONS']) {
    it(`${name} as a text var is a configuration error that names it`, async () => {
      const { data, logs } = await twoIsolates({ bindings: { [name]: 'oops' } });
      const response = await data(0, await publicId());
      expect(response.status).toBe(500);
      expect(JSON.parse(response.body)).toEqual({
        error: 'The analytics edge is misconfigured; see its log.',
      });
      await expect.poll(() => logs.some((l) => l.includes(`${name} must be bound`))).toBe(true);
    }, 60_000);
  }
});
