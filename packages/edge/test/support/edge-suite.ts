/**
 * The edge's behaviour over real HTTP, written once and run on Node and under workerd against
 * the real engine: over HTTP behind a counting, fault-injecting proxy, or (Node) in process
 * behind the same kind of tap. Every attack must fail closed without reaching the backend, and
 * the canary key must appear in no response or log.
 */

import { dailyCounts, eventsIn } from '@analytics-chart/test-kit/fixture-events';
import { sign as signJwt } from 'hono/jwt';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { compileRegistry } from '../../src/registry/compile-definition.ts';
import { Keyring } from '../../src/tokens/keyring.ts';
import { createQuerySigner } from '../../src/tokens/query-signer.ts';
import { type AnalyticsBackend, startAnalyticsBackend } from './analytics-backend.ts';
import { type EngineTap, engineTap } from './engine-tap.ts';
import { type FaultProxy, startFaultProxy } from './fault-proxy.ts';
import { b64url, forgeTicket, forgeToken, parts } from './forge.ts';
import type { EdgeUnderTest, Runtime } from './harness.ts';
import { APP_ORIGIN, PUBLIC_URL, TEST_LIMITS, TEST_QUERIES } from './test-config.ts';

const hex = (n: number) =>
  Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) =>
    b.toString(16).padStart(2, '0'),
  ).join('');

/** A response as the suite records it, for the closing canary sweep. */
interface Seen {
  path: string;
  status: number;
  headers: Headers;
  text: string;
}

/** How the edge under test is run: its runtime, and its backend (HTTP to the engine, or in process). */
export interface SuiteVariant {
  runtime: Runtime;
  /** Set for the in-process backend: the harness builds `engineBackend` over this tap. */
  inProcess?: boolean;
  start(env: Record<string, string>, tap?: EngineTap): Promise<EdgeUnderTest>;
}

export function describeEdgeSuite(variant: SuiteVariant) {
  const { runtime, inProcess = false, start } = variant;
  // The HTTP backend retries once (ANALYTICS_RETRIES below); the in-process one never does.
  const retries = inProcess ? 0 : 1;
  describe(`edge over HTTP on ${runtime}, ${inProcess ? 'in-process engine' : 'engine over HTTP'}`, () => {
    const CANARY_KEY = `canary-${hex(16)}`;
    const current = { kid: 'current', secret: hex(24) };
    const previous = { kid: 'previous', secret: hex(24) };
    const SESSION_SECRET = hex(24);
    const REVOKED_JTI = `revoked-${hex(4)}`;
    const keyring = new Keyring([current, previous]);
    const signer = createQuerySigner(keyring, compileRegistry(TEST_QUERIES), {
      sessionTtl: 600,
      maxSessionTtl: 3600,
      publicTtl: 30 * 86_400,
    });
    let backend: AnalyticsBackend;
    let proxy: FaultProxy | undefined;
    /** Where backend calls are counted and faults injected: the proxy, or the in-process tap. */
    let tap: Pick<FaultProxy, 'calls' | 'mode'>;
    let edge: EdgeUnderTest;
    const seen: Seen[] = [];
    let ip = '';
    let clients = 0;

    beforeAll(async () => {
      backend = await startAnalyticsBackend(CANARY_KEY);
      let engineSide: EngineTap | undefined;
      if (inProcess) {
        engineSide = engineTap(backend.engine);
        tap = engineSide;
      } else {
        proxy = await startFaultProxy({ upstream: backend.url });
        tap = proxy;
      }
      edge = await start(
        {
          ANALYTICS_API_KEY: CANARY_KEY,
          ANALYTICS_BASE_URL: proxy?.url ?? 'http://127.0.0.1:9',
          ANALYTICS_TIMEOUT_MS: '800',
          ANALYTICS_RETRIES: '1',
          EDGE_SIGNING_KEYS: `${current.kid}:${current.secret},${previous.kid}:${previous.secret}`,
          EDGE_REVOKED_IDS: REVOKED_JTI,
          EDGE_PUBLIC_URL: PUBLIC_URL,
          SESSION_SECRET,
        },
        engineSide,
      );
    }, 60_000);

    afterAll(async () => {
      await edge?.close();
      await proxy?.close();
      await backend?.close();
    });

    beforeEach(() => {
      ip = `10.0.${runtime === 'node' ? 1 : 2}.${++clients}`;
      tap.mode({ kind: 'ok' });
    });

    async function call(
      path: string,
      init: RequestInit & { headers?: Record<string, string> } = {},
    ) {
      const response = await fetch(`${edge.url}${path}`, {
        ...init,
        headers: { 'x-forwarded-for': ip, ...(init.headers ?? {}) },
      });
      const text = await response.text();
      seen.push({ path, status: response.status, headers: response.headers, text });
      return {
        status: response.status,
        headers: response.headers,
        text,
        json: () => JSON.parse(text) as Record<string, unknown>,
      };
    }

    async function cookie(
      subject: string,
      tenant: string,
      extra: Record<string, unknown> = {},
    ): Promise<string> {
      const token = await signJwt(
        { sub: subject, tenant, exp: Math.floor(Date.now() / 1000) + 3600, ...extra },
        SESSION_SECRET,
      );
      return `session=${token}`;
    }

    /** Signs through the sign route as `subject` of `tenant`. */
    async function signAs(
      subject: string,
      tenant: string,
      body: Record<string, unknown> = { query: 'tenant-daily' },
    ) {
      const response = await call('/api/sign', {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: await cookie(subject, tenant) },
        body: JSON.stringify(body),
      });
      expect(response.status, response.text).toBe(200);
      return response.json() as { id: string; expiresAt: string };
    }

    function data(id: string, options: { query?: string; headers?: Record<string, string> } = {}) {
      return call(`/api/data${options.query ?? ''}`, {
        headers: { authorization: `Bearer ${id}`, ...(options.headers ?? {}) },
      });
    }

    /** A public id for `tenant` (unique tenants give unique cache keys). */
    async function publicId(tenant: string, extra: Record<string, unknown> = {}) {
      return (
        await signer.sign({ query: 'public-total', params: { tenant }, public: true, ...extra })
      ).id;
    }

    const now = () => Math.floor(Date.now() / 1000);
    const header = (kid = 'current', alg = 'HS256') => ({ alg, typ: 'JWT', kid });
    const publicClaims = (extra: Record<string, unknown> = {}) => ({
      q: 'public-total',
      p: { tenant: 'acme' },
      pub: true,
      iat: now(),
      exp: now() + 600,
      jti: `j-${hex(6)}`,
      ...extra,
    });

    /** An answer of the HTTP server itself (an oversized request), before the edge sees it. */
    function serverRefusal(response: { status: number; text: string }) {
      return response.status === 431 || (response.status === 400 && response.text === '');
    }

    function expectRefused(
      response: { status: number; json(): Record<string, unknown> },
      status: number,
      code: string,
    ) {
      expect(response.status).toBe(status);
      const body = response.json();
      expect(body.code).toBe(code);
      expect(typeof body.error).toBe('string');
      expect(Object.keys(body).sort()).toEqual(['code', 'error']);
    }

    it('answers health', async () => {
      const response = await call('/health');
      expect(response.status).toBe(200);
      expect(response.json()).toEqual({ ok: true });
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    });

    it('signs for the session and answers the tenant its own data, trimmed', async () => {
      const { id, expiresAt } = await signAs('alice', 'acme');
      const lifetime = (Date.parse(expiresAt) - Date.now()) / 1000;
      expect(lifetime).toBeGreaterThan(500);
      expect(lifetime).toBeLessThanOrEqual(600);
      const before = tap.calls.length;
      const response = await data(id, { headers: { cookie: await cookie('alice', 'acme') } });
      expect(response.status, response.text).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.headers.get('cache-control')).toMatch(/^private/);
      expect(response.headers.get('etag')).toMatch(/^"[0-9a-f]+-[0-9a-f]{16}"$/);
      const payload = response.json() as {
        graph: string;
        title: string;
        timeZone: string;
        labels: string[];
        series: { name: string; values: number[] }[];
        range: { start: number; end: number };
        combined: number;
      };
      expect(payload.graph).toBe('Single Line');
      expect(payload.title).toBe('Events per day');
      expect(payload.timeZone).toBe('UTC');
      expect(payload.series.map((s) => s.name)).toEqual(['Count']);
      // Every bucket equals the plain count of the fixtures for acme on that day.
      const { start, end } = payload.range;
      const expected = dailyCounts(backend.events, 'acme', start, end);
      expect(expected.size).toBeGreaterThanOrEqual(7);
      const got = new Map(payload.labels.map((label, i) => [label, payload.series[0]?.values[i]]));
      for (const [label, count] of expected) expect(got.get(label), label).toBe(count);
      for (const [label, value] of got) expect(value, label).toBe(expected.get(label) ?? 0);
      expect(payload.combined).toBe(eventsIn(backend.events, 'acme', start, end).length);
      // Only chart data: no tenant value, filter, collection or key in the answer.
      expect(response.text).not.toContain('acme');
      expect(response.text).not.toContain('all_events');
      expect(response.text).not.toContain('filters');
      // The backend got the tenant from the session and the key in the body, nothing else.
      const sent = tap.calls.slice(before);
      expect(sent).toHaveLength(1);
      expect(sent[0]?.body.api_key).toBe(CANARY_KEY);
      expect(sent[0]?.body.filters).toEqual([['tenant', '=', 'acme']]);
      if (!inProcess) {
        expect(sent[0]?.headers.authorization).toBeUndefined();
        expect(sent[0]?.headers.cookie).toBeUndefined();
        expect(sent[0]?.url).toBe('/api/visualize/data');
      }
    });

    it('lets the viewer pick an allowed range and refuses any other option', async () => {
      const { id } = await signAs('alice', 'acme');
      const headers = { cookie: await cookie('alice', 'acme') };
      const before = tap.calls.length;
      const month = await data(id, { query: '?range=30d', headers });
      expect(month.status, month.text).toBe(200);
      const sent = tap.calls.slice(before);
      const payload = month.json() as { range: { start: number; end: number } };
      // The range's window, resolved once by the edge, is what the backend ran: 30 UTC days.
      expect(sent.at(-1)?.body).toMatchObject(payload.range);
      expect(payload.range.end - payload.range.start).toBe(30 * 86_400);
      const calls = tap.calls.length;
      for (const query of [
        '?range=1y',
        '?range=30d&range=7d',
        '?limit=5',
        '?range=7d&tenant=globex',
        '?fields=email',
      ]) {
        expectRefused(await data(id, { query, headers }), 400, 'bad_request');
      }
      expect(tap.calls.length).toBe(calls);
    });

    it('refuses a session-bound id replayed by another user, or without a session', async () => {
      const { id } = await signAs('alice', 'acme');
      const calls = tap.calls.length;
      expectRefused(
        await data(id, { headers: { cookie: await cookie('mallory', 'acme') } }),
        403,
        'forbidden',
      );
      expectRefused(await data(id), 401, 'forbidden');
      expectRefused(await data(id, { headers: { cookie: 'session=not-a-jwt' } }), 401, 'forbidden');
      expect(tap.calls.length).toBe(calls);
    });

    it("refuses an id used under another tenant's session of the same user", async () => {
      const { id } = await signAs('alice', 'acme');
      const calls = tap.calls.length;
      expectRefused(
        await data(id, { headers: { cookie: await cookie('alice', 'globex') } }),
        403,
        'forbidden',
      );
      expect(tap.calls.length).toBe(calls);
    });

    it('takes the tenant from the session only, never from the sign body', async () => {
      const aliceCookie = await cookie('alice', 'acme');
      const post = (body: unknown, headers: Record<string, string> = {}) =>
        call('/api/sign', {
          method: 'POST',
          headers: { 'content-type': 'application/json', cookie: aliceCookie, ...headers },
          body: typeof body === 'string' ? body : JSON.stringify(body),
        });
      expectRefused(
        await post({ query: 'tenant-daily', params: { tenant: 'globex' } }),
        400,
        'bad_request',
      );
      expectRefused(await post({ query: 'tenant-daily', tenant: 'globex' }), 400, 'bad_request');
      expectRefused(await post({ query: 'no-such-query' }), 404, 'not_found');
      expectRefused(await post({ query: 'tenant-daily', range: '1y' }), 400, 'bad_request');
      expectRefused(await post({ query: 'tenant-daily', ttl: '30d' }), 400, 'bad_request');
      expectRefused(await post('{"query":'), 400, 'bad_request');
      expectRefused(
        await post({ query: 'tenant-daily' }, { 'content-type': 'text/plain' }),
        415,
        'bad_request',
      );
      const anonymous = await call('/api/sign', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'tenant-daily' }),
      });
      expectRefused(anonymous, 401, 'forbidden');
    });

    it('binds a SQL parameter from the session: each tenant gets its own rows only', async () => {
      for (const [subject, tenant] of [
        ['alice', 'acme'],
        ['bob', 'globex'],
      ] as const) {
        const { id } = await signAs(subject, tenant, { query: 'tenant-sql' });
        const before = tap.calls.length;
        const response = await data(id, { headers: { cookie: await cookie(subject, tenant) } });
        expect(response.status, response.text).toBe(200);
        const payload = response.json() as { labels: string[]; series: { values: number[] }[] };
        const expected = new Map<string, number>();
        for (const e of backend.events.filter((e) => e.json.tenant === tenant)) {
          const kind = String(e.json.event);
          expected.set(kind, (expected.get(kind) ?? 0) + 1);
        }
        const got = new Map(
          payload.labels.map((label, i) => [label, payload.series[0]?.values[i]]),
        );
        expect(got).toEqual(expected);
        // One backend call per tenant: the cache key holds the parameter's value.
        const sent = tap.calls.slice(before);
        expect(sent).toHaveLength(1);
        if (inProcess) {
          // The engine binds the value: the SQL text is the definition's, unchanged.
          expect(sent[0]?.body.parameters).toEqual({ tenant });
          expect(sent[0]?.body.sql_query).toContain('= {tenant:String}');
        } else {
          // The hosted service has no bind parameters: a literal, and no parameters field.
          expect(sent[0]?.body.parameters).toBeUndefined();
          expect(sent[0]?.body.sql_query).toContain(`= '${tenant}'`);
        }
      }
      const { id } = await signAs('alice', 'acme', { query: 'tenant-sql' });
      expectRefused(
        await data(id, { headers: { cookie: await cookie('bob', 'globex') } }),
        403,
        'forbidden',
      );
    });

    it('signs, renews and answers a definition only for the sessions its signers rule admits', async () => {
      const sign = async (extra: Record<string, unknown>, body: Record<string, unknown>) =>
        call('/api/sign', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            cookie: await cookie('alice', 'acme', extra),
          },
          body: JSON.stringify(body),
        });
      const calls = tap.calls.length;
      expectRefused(await sign({}, { query: 'admin-total' }), 403, 'forbidden');
      expectRefused(await sign({ role: 'viewer' }, { query: 'admin-total' }), 403, 'forbidden');
      // A signer parameter naming another tenant than the session's is refused at sign time too.
      expectRefused(
        await sign({}, { query: 'public-total', params: { tenant: 'globex' } }),
        403,
        'forbidden',
      );
      expect(tap.calls.length).toBe(calls);
      const own = await sign({}, { query: 'public-total', params: { tenant: 'acme' } });
      expect(own.status, own.text).toBe(200);
      const admitted = await sign({ role: 'admin' }, { query: 'admin-total' });
      expect(admitted.status, admitted.text).toBe(200);
      const { id } = admitted.json() as { id: string };
      const admin = await cookie('alice', 'acme', { role: 'admin' });
      expect((await data(id, { headers: { cookie: admin } })).status).toBe(200);
      // The role taken away: the id stops answering and cannot be renewed.
      const demoted = await cookie('alice', 'acme', { role: 'viewer' });
      expectRefused(await data(id, { headers: { cookie: demoted } }), 403, 'forbidden');
      const renew = (session: string) =>
        call('/api/renew', {
          method: 'POST',
          headers: { 'content-type': 'application/json', cookie: session },
          body: JSON.stringify({ id }),
        });
      expectRefused(await renew(demoted), 403, 'forbidden');
      expect((await renew(admin)).status).toBe(200);
    });

    it('refuses oversized bodies and ids', async () => {
      const big = await call('/api/sign', {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: await cookie('alice', 'acme') },
        body: JSON.stringify({ query: 'tenant-daily', pad: 'x'.repeat(40_000) }),
      });
      expectRefused(big, 413, 'bad_request');
      const calls = tap.calls.length;
      const [h, p, s] = parts(await publicId('acme'));
      expectRefused(await data(`${h}.${p}${'A'.repeat(9000)}.${s}`), 401, 'invalid');
      // Far beyond any header limit: the server refuses it one way or another, never with a 5xx
      // (Node's server with a 431, Deno's with an empty 400, before the edge sees it).
      const huge = await data(`${h}.${'A'.repeat(70_000)}.${s}`);
      expect([401, 413, 431, 400]).toContain(huge.status);
      if (huge.status === 400) expect(serverRefusal(huge)).toBe(true);
      expect(tap.calls.length).toBe(calls);
    });

    it('refuses tampered payloads, swapped signatures, alg none and algorithm switches', async () => {
      const id = await publicId('acme');
      const other = await publicId('globex');
      const [h, p, s] = parts(id);
      const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
      const calls = tap.calls.length;
      const attempts = [
        `${h}.${b64url({ ...claims, p: { tenant: 'globex' } })}.${s}`,
        `${h}.${b64url({ ...claims, exp: now() + 10 * 365 * 86_400 })}.${s}`,
        `${h}.${p}.${parts(other)[2]}`,
        `${b64url({ alg: 'none', typ: 'JWT', kid: 'current' })}.${p}.`,
        `${b64url({ alg: 'none', typ: 'JWT', kid: 'current' })}.${p}.${s}`,
        forgeToken(header('current', 'HS512'), claims, current.secret),
        `${b64url(header('current', 'RS256'))}.${p}.${s}`,
        `${h}.${p}.${s.slice(0, -4)}AAAA`,
        `${h}.${p}`,
        'Bearer',
      ];
      for (const attempt of attempts) expectRefused(await data(attempt), 401, 'invalid');
      expectRefused(await call('/api/data'), 401, 'invalid');
      expectRefused(
        await call('/api/data', { headers: { authorization: `Basic ${id}` } }),
        401,
        'invalid',
      );
      expect(tap.calls.length).toBe(calls);
      expect((await data(id)).status).toBe(200);
    });

    it('refuses a wrong or unknown kid, accepts the previous key', async () => {
      const calls = tap.calls.length;
      expectRefused(
        await data(forgeToken(header('current'), publicClaims(), hex(24))),
        401,
        'invalid',
      );
      expectRefused(
        await data(forgeToken(header('retired'), publicClaims(), current.secret)),
        401,
        'invalid',
      );
      expectRefused(
        await data(forgeToken(header('previous'), publicClaims(), current.secret)),
        401,
        'invalid',
      );
      expect(tap.calls.length).toBe(calls);
      const byPrevious = forgeToken(
        header('previous'),
        publicClaims({ p: { tenant: `prev-${hex(3)}` } }),
        previous.secret,
      );
      expect((await data(byPrevious)).status).toBe(200);
    });

    it('answers expired ids with code expired, not-yet-valid ids with invalid', async () => {
      const t = now();
      const calls = tap.calls.length;
      const expired = forgeToken(
        header(),
        publicClaims({ iat: t - 700, exp: t - 100 }),
        current.secret,
      );
      expectRefused(await data(expired), 401, 'expired');
      const future = forgeToken(header(), publicClaims({ nbf: t + 600 }), current.secret);
      expectRefused(await data(future), 401, 'invalid');
      const issuedLater = forgeToken(header(), publicClaims({ iat: t + 600 }), current.secret);
      expectRefused(await data(issuedLater), 401, 'invalid');
      expect(tap.calls.length).toBe(calls);
    });

    it('renews an expired session id for the same user only', async () => {
      const t = now();
      const expiredClaims = {
        q: 'tenant-daily',
        p: { tenant: 'acme' },
        sub: 'alice',
        iat: t - 900,
        exp: t - 300,
        jti: `e-${hex(6)}`,
      };
      const expired = forgeToken(header(), expiredClaims, current.secret);
      const alice = await cookie('alice', 'acme');
      expectRefused(await data(expired, { headers: { cookie: alice } }), 401, 'expired');
      const renew = (id: string, cookieHeader?: string) =>
        call('/api/renew', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(cookieHeader ? { cookie: cookieHeader } : {}),
          },
          body: JSON.stringify({ id }),
        });
      const renewed = await renew(expired, alice);
      expect(renewed.status, renewed.text).toBe(200);
      const { id, expiresAt } = renewed.json() as { id: string; expiresAt: string };
      expect(Date.parse(expiresAt)).toBeGreaterThan(Date.now() + 500_000);
      expect(id).not.toBe(expired);
      expect((await data(id, { headers: { cookie: alice } })).status).toBe(200);
      // The renewed id carries the same subject and tenant, a new jti.
      const claims = JSON.parse(Buffer.from(parts(id)[1], 'base64url').toString());
      expect(claims).toMatchObject({ q: 'tenant-daily', p: { tenant: 'acme' }, sub: 'alice' });
      expect(claims.jti).not.toBe(expiredClaims.jti);

      expectRefused(await renew(expired, await cookie('mallory', 'acme')), 403, 'forbidden');
      expectRefused(await renew(expired, await cookie('alice', 'globex')), 403, 'forbidden');
      expectRefused(await renew(expired), 401, 'forbidden');
      const tampered = `${parts(expired)[0]}.${b64url({ ...expiredClaims, p: { tenant: 'globex' } })}.${parts(expired)[2]}`;
      expectRefused(await renew(tampered, alice), 401, 'invalid');
      const ancient = forgeToken(
        header(),
        { ...expiredClaims, iat: t - 10_000, exp: t - 7200 },
        current.secret,
      );
      expectRefused(await renew(ancient, alice), 401, 'invalid');
      expectRefused(await renew(await publicId('acme'), alice), 403, 'forbidden');
    });

    it('refuses revoked ids and ids of unknown queries', async () => {
      const calls = tap.calls.length;
      expectRefused(
        await data(forgeToken(header(), publicClaims({ jti: REVOKED_JTI }), current.secret)),
        401,
        'invalid',
      );
      expectRefused(
        await data(forgeToken(header(), publicClaims({ q: 'dropped-query' }), current.secret)),
        404,
        'not_found',
      );
      expect(tap.calls.length).toBe(calls);
    });

    it('answers an inline definition carried in the id', async () => {
      const tenant = `inline-${hex(3)}`;
      const { id } = await signer.sign({
        definition: {
          title: 'Inline',
          query: {
            graph_type: 'Single Value',
            IANA_time_zone: 'UTC',
            start: '30 days ago',
            end: 'now',
            filters: [['tenant', '=', tenant]],
          },
        },
        public: true,
      });
      const response = await data(id);
      expect(response.status, response.text).toBe(200);
      expect(response.json()).toMatchObject({ graph: 'Single Value', title: 'Inline', value: 0 });
    });

    it('returns Samples with the allowlisted fields only', async () => {
      const { id } = await signAs('alice', 'acme', { query: 'recent-events' });
      const response = await data(id, { headers: { cookie: await cookie('alice', 'acme') } });
      expect(response.status, response.text).toBe(200);
      const payload = response.json() as {
        columns: string[];
        rows: unknown[][];
        range: { start: number; end: number };
      };
      expect(payload.columns).toEqual(['timestamp', 'event', 'user.plan']);
      const expected = eventsIn(backend.events, 'acme', payload.range.start, payload.range.end)
        .sort((a, b) => b.timestamp - a.timestamp)
        .slice(0, 50)
        .map((e) => [e.timestamp, e.json.event, (e.json.user as { plan: string }).plan]);
      expect(expected.length).toBeGreaterThan(40);
      expect(payload.rows).toEqual(expected);
      // The card number with its hyphen: its digits alone can turn up inside a timestamp.
      for (const secret of ['secret.example', '4242-4242', 'email', 'card', 'tenant'])
        expect(response.text).not.toContain(secret);
    });

    it('answers 304 to a matching If-None-Match', async () => {
      const id = await publicId(`etag-${hex(3)}`);
      const first = await data(id);
      expect(first.status).toBe(200);
      const etag = first.headers.get('etag') ?? '';
      const again = await data(id, { headers: { 'if-none-match': etag } });
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.get('etag')).toBe(etag);
      expect((await data(id, { headers: { 'if-none-match': '"other"' } })).status).toBe(200);
    });

    it('coalesces concurrent identical requests into one backend call, shared across ids', async () => {
      const tenant = `flight-${hex(3)}`;
      const ids = await Promise.all(Array.from({ length: 4 }, () => publicId(tenant)));
      tap.mode({ kind: 'slow', ms: 150 });
      const before = tap.calls.length;
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => data(ids[i % ids.length] as string)),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
      expect(new Set(answers.map((a) => a.text)).size).toBe(1);
      expect(tap.calls.length - before).toBe(1);
      // Later requests with yet another id for the same resolved query hit the cache.
      expect((await data(await publicId(tenant))).status).toBe(200);
      expect(tap.calls.length - before).toBe(1);
    });

    it('maps backend failures: down 502, slow 504, key rejected 502 without retry, 5xx retried over HTTP', async () => {
      tap.mode({ kind: 'close' });
      let before = tap.calls.length;
      expectRefused(await data(await publicId(`down-${hex(3)}`)), 502, 'backend');
      // Deno's fetch itself sends a request once more when the pooled connection it picked is
      // closed under it (hyper retries such requests); the edge's own policy is one retry.
      const resent = runtime === 'deno' ? [0, 1] : [0];
      expect(resent.map((n) => 1 + retries + n)).toContain(tap.calls.length - before);

      tap.mode({ kind: 'hang' });
      expectRefused(await data(await publicId(`hang-${hex(3)}`)), 504, 'timeout');

      tap.mode({ kind: 'slow', ms: 2000 });
      expectRefused(await data(await publicId(`slow-${hex(3)}`)), 504, 'timeout');

      tap.mode({ kind: 'malformed' });
      expectRefused(await data(await publicId(`junk-${hex(3)}`)), 502, 'backend');

      // A hostile upstream echoing the key in its error text: the key must not travel further.
      tap.mode({
        kind: 'status',
        status: 400,
        body: { error: `bad query for key ${CANARY_KEY}` },
      });
      expectRefused(await data(await publicId(`echo-${hex(3)}`)), 502, 'backend');

      tap.mode({ kind: 'status', status: 400, body: { error: 'Invalid API KEY' } });
      before = tap.calls.length;
      expectRefused(await data(await publicId(`key-${hex(3)}`)), 502, 'backend');
      expect(tap.calls.length - before).toBe(1);
      await expect
        .poll(() =>
          edge.logs.some(
            (l) => l.includes('backend.key_rejected') && l.includes('ANALYTICS_API_KEY'),
          ),
        )
        .toBe(true);

      tap.mode({ kind: 'ok' });
      tap.mode({ kind: 'status', status: 503 }, 1);
      before = tap.calls.length;
      const after503 = await data(await publicId(`retry-${hex(3)}`));
      // Over HTTP a 5xx is retried and the retry succeeds; in process there is nothing to retry.
      expect(after503.status).toBe(retries ? 200 : 502);
      expect(tap.calls.length - before).toBe(1 + retries);
    });

    it('serves a stale answer when the backend fails after expiry', async () => {
      const { id } = await signer.sign({
        query: 'short-cache',
        params: { tenant: `stale-${hex(3)}` },
        public: true,
      });
      const fresh = await data(id);
      expect(fresh.status).toBe(200);
      await new Promise((r) => setTimeout(r, 1100));
      tap.mode({ kind: 'status', status: 500 });
      const stale = await data(id);
      expect(stale.status).toBe(200);
      expect(stale.text).toBe(fresh.text);
      expect(stale.headers.get('x-analytics-stale')).toBe('true');
    });

    it('limits requests per id and per client address', async () => {
      const id = await publicId(`limit-${hex(3)}`);
      let last = await data(id);
      for (let i = 1; i < TEST_LIMITS.perId.burst; i++) last = await data(id);
      expect(last.status).toBe(200);
      const limited = await data(id);
      expectRefused(limited, 429, 'rate_limited');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      // A public id has many viewers: another address still gets it.
      expect((await data(id, { headers: { 'x-forwarded-for': `${ip}.7` } })).status).toBe(200);
      // A session-bound id has one user: its bucket is the same from every address.
      const { id: bound } = await signAs('alice', 'acme');
      const alice = { cookie: await cookie('alice', 'acme') };
      for (let i = 0; i < TEST_LIMITS.perId.burst; i++) {
        expect((await data(bound, { headers: alice })).status).toBe(200);
      }
      const elsewhere = await data(bound, { headers: { ...alice, 'x-forwarded-for': `${ip}.8` } });
      expectRefused(elsewhere, 429, 'rate_limited');
      // Another id from the same address still works until the address's own bucket is empty.
      const fresh = await publicId(`limit2-${hex(3)}`);
      expect((await data(fresh)).status).toBe(200);
      const statuses: number[] = [];
      for (let i = 0; i < TEST_LIMITS.perIp.burst; i++)
        statuses.push((await call('/api/data')).status);
      expect(statuses).toContain(429);
      expect(statuses.indexOf(429)).toBeGreaterThan(0);
    });

    it('answers unknown paths with the JSON 404, other methods with a 405 and Allow, and every preflight with the security headers', async () => {
      for (const [path, method] of [
        ['/nope', 'GET'],
        ['/api/nope', 'POST'],
      ] as const) {
        const res = await call(path, { method });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.headers.get('content-type')).toContain('application/json');
        expect(await res.json()).toEqual({ error: 'There is nothing here.', code: 'not_found' });
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      }
      for (const [path, method, allow] of [
        ['/api/sign', 'GET', 'POST, OPTIONS'],
        ['/api/renew', 'PUT', 'POST, OPTIONS'],
        ['/api/data', 'POST', 'GET, HEAD, OPTIONS'],
        ['/api/data', 'DELETE', 'GET, HEAD, OPTIONS'],
        ['/health', 'POST', 'GET, HEAD'],
        ['/analytics-chart.js', 'PUT', 'GET, HEAD'],
        ['/embed/some-id', 'POST', 'GET, HEAD'],
        ['/oembed', 'PUT', 'GET, HEAD'],
        ['/embed.js', 'DELETE', 'GET, HEAD'],
      ] as const) {
        const res = await call(path, { method, headers: { origin: APP_ORIGIN } });
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(res.headers.get('allow'), `${method} ${path}`).toBe(allow);
        expect(res.headers.get('content-type')).toContain('application/json');
        expect(await res.json()).toEqual({
          error: `This address answers ${allow} only.`,
          code: 'bad_request',
        });
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
        // The API's callers on an allowed origin can read why (the bundle and /health have no CORS).
        if (path.startsWith('/api/')) {
          expect(res.headers.get('access-control-allow-origin'), `${method} ${path}`).toBe(
            APP_ORIGIN,
          );
        }
      }
      for (const [path, method] of [
        ['/api/data', 'GET'],
        ['/api/sign', 'POST'],
        ['/api/renew', 'POST'],
      ] as const) {
        const res = await call(path, {
          method: 'OPTIONS',
          headers: { origin: APP_ORIGIN, 'access-control-request-method': method },
        });
        expect(res.status, `OPTIONS ${path}`).toBe(204);
        expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
        expect(res.headers.get('referrer-policy'), path).toBe('no-referrer');
        expect(res.headers.get('cross-origin-resource-policy'), path).toBe('same-origin');
      }
    });

    it('answers CORS for allowed origins only', async () => {
      const preflight = (path: string, origin: string, method: string) =>
        call(path, {
          method: 'OPTIONS',
          headers: {
            origin,
            'access-control-request-method': method,
            'access-control-request-headers': 'authorization, content-type',
          },
        });
      const ok = await preflight('/api/data', APP_ORIGIN, 'GET');
      expect(ok.status).toBe(204);
      expect(ok.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
      expect(ok.headers.get('access-control-allow-credentials')).toBe('true');
      const allowed = ok.headers.get('access-control-allow-headers')?.toLowerCase() ?? '';
      expect(allowed).toContain('authorization');
      // Cross-origin widgets revalidate with If-None-Match like same-origin ones.
      expect(allowed).toContain('if-none-match');
      const evil = await preflight('/api/data', 'https://evil.example', 'GET');
      expect(evil.headers.get('access-control-allow-origin')).toBeNull();
      const signOk = await preflight('/api/sign', APP_ORIGIN, 'POST');
      expect(signOk.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
      const signEvil = await preflight('/api/sign', 'https://evil.example', 'POST');
      expect(signEvil.headers.get('access-control-allow-origin')).toBeNull();
      const id = await publicId(`cors-${hex(3)}`);
      const read = await data(id, { headers: { origin: APP_ORIGIN } });
      expect(read.status).toBe(200);
      expect(read.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
      expect(read.headers.get('access-control-allow-credentials')).toBe('true');
      expect(read.headers.get('access-control-expose-headers')).toContain('ETag');
      expect(read.headers.get('vary')).toContain('Origin');
      expect(read.headers.get('etag')).toBeTruthy();
      const foreign = await data(id, { headers: { origin: 'https://evil.example' } });
      expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
      expect(foreign.headers.get('vary')).toContain('Origin');
    });

    it('lets an allowed origin read revalidations and refusals too', async () => {
      const id = await publicId(`cors-${hex(3)}`);
      const origin = { origin: APP_ORIGIN };
      const etag = (await data(id, { headers: origin })).headers.get('etag') ?? '';
      const same = await data(id, { headers: { ...origin, 'if-none-match': etag } });
      expect(same.status).toBe(304);
      expect(same.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
      expect(same.headers.get('vary')).toContain('Origin');
      // A cross-origin widget must read the code of a refusal (`expired` makes it renew): one
      // refused before any await, one after the signature check, one expired.
      const t = now();
      for (const [token, code] of [
        ['not-a-jwt', 'invalid'],
        [forgeToken(header(), publicClaims(), hex(24)), 'invalid'],
        [
          forgeToken(header(), publicClaims({ iat: t - 700, exp: t - 100 }), current.secret),
          'expired',
        ],
      ] as const) {
        const refused = await data(token, { headers: origin });
        expectRefused(refused, 401, code);
        expect(refused.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
        expect(refused.headers.get('access-control-allow-credentials')).toBe('true');
        expect(refused.headers.get('vary')).toContain('Origin');
        const elsewhere = await data(token, { headers: { origin: 'https://evil.example' } });
        expect(elsewhere.headers.get('access-control-allow-origin')).toBeNull();
      }
    });

    it('holds ids with an audience to their origins', async () => {
      const id = await publicId(`aud-${hex(3)}`, { audience: 'https://blog.example.com' });
      expect((await data(id, { headers: { origin: 'https://blog.example.com' } })).status).toBe(
        200,
      );
      expectRefused(
        await data(id, { headers: { origin: 'https://evil.example' } }),
        403,
        'forbidden',
      );
    });

    it('serves the bundle with an ETag and an immutable hashed name', async () => {
      const plain = await call('/analytics-chart.js');
      expect(plain.status).toBe(200);
      expect(plain.text).toContain('analytics-chart test bundle');
      expect(plain.headers.get('content-type')).toMatch(/^text\/javascript/);
      expect(plain.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
      expect(plain.headers.get('access-control-allow-origin')).toBe('*');
      expect(plain.headers.get('x-content-type-options')).toBe('nosniff');
      expect(plain.headers.get('content-security-policy')).toContain("default-src 'none'");
      const etag = plain.headers.get('etag') ?? '';
      const hash = etag.replaceAll('"', '');
      expect(hash).toMatch(/^[0-9a-f]{16}$/);
      expect(
        (await call('/analytics-chart.js', { headers: { 'if-none-match': etag } })).status,
      ).toBe(304);
      const hashed = await call(`/analytics-chart.${hash}.js`);
      expect(hashed.status).toBe(200);
      expect(hashed.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(hashed.text).toBe(plain.text);
      expectRefused(await call('/analytics-chart.0000000000000000.js'), 404, 'not_found');
    });

    /** The embed page of `id` with `query`, and its CSP's directives by name. */
    async function embedPage(id: string, query = '') {
      const response = await call(`/embed/${id}${query}`);
      const csp = new Map(
        (response.headers.get('content-security-policy') ?? '')
          .split(';')
          .map((d) => d.trim().split(/\s+/))
          .map(([name = '', ...sources]) => [name, sources] as const),
      );
      return { ...response, csp };
    }

    function expectErrorPage(
      response: Awaited<ReturnType<typeof embedPage>>,
      status: number,
      sentence: RegExp,
    ) {
      expect(response.status, response.text).toBe(status);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.text).toContain('Chart unavailable');
      expect(response.text).toMatch(sentence);
      expect(response.text).not.toContain('<analytics-chart');
      expect(response.csp.get('script-src')).toEqual(["'self'"]);
      expect(response.headers.get('cache-control')).toBe('no-store');
    }

    it('serves the embed page of a public id under a strict CSP, framed only by its audience', async () => {
      const calls = tap.calls.length;
      const id = (
        await signer.sign({
          query: 'public-daily',
          params: { tenant: `embed-${hex(3)}` },
          public: true,
          audience: ['https://blog.example.com', 'https://news.example.com'],
        })
      ).id;
      const page = await embedPage(id, '?range=30d&theme=dark&height=420&locale=de-ch');
      expect(page.status, page.text).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('cache-control')).toBe('no-store');
      expect(page.headers.get('x-content-type-options')).toBe('nosniff');
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
      expect(page.csp.get('frame-ancestors')).toEqual([
        'https://blog.example.com',
        'https://news.example.com',
      ]);
      expect(page.csp.get('default-src')).toEqual(["'none'"]);
      expect(page.csp.get('script-src')).toEqual(["'self'"]);
      expect(page.csp.get('connect-src')).toEqual(["'self'"]);
      expect(page.headers.get('content-security-policy')).not.toContain('unsafe');
      // The one inline style is allowed by its own hash, computed here from the page.
      const style = /<style>([^<]*)<\/style>/.exec(page.text)?.[1] ?? '';
      const digest = new Uint8Array(
        await crypto.subtle.digest('SHA-256', new TextEncoder().encode(style)),
      );
      const hash = `'sha256-${btoa(String.fromCharCode(...digest))}'`;
      expect(page.csp.get('style-src')).toEqual(["'self'", hash]);
      // No inline script: every script is a file of the edge, the bundle under its hashed name.
      const scripts = [...page.text.matchAll(/<script([^>]*)>([^<]*)<\/script>/g)];
      expect(scripts.length).toBe(2);
      for (const [, attributes, body] of scripts) {
        expect(body).toBe('');
        expect(attributes).toMatch(/ src="\.\.\/[^"]+\.js"/);
      }
      const bundleHash = (await call('/analytics-chart.js')).headers
        .get('etag')
        ?.replaceAll('"', '');
      expect(page.text).toContain(`src="../analytics-chart.${bundleHash}.js"`);
      // The element asks for data through the page's ticket.
      expect(page.text).toMatch(
        new RegExp(
          `<analytics-chart query-id="${id}" height="420" lazy="false" range="30d" theme="dark" locale="de-CH" endpoint="\\.\\./embed-data/[A-Za-z0-9_.~-]+/"></analytics-chart>`,
        ),
      );
      expect(page.text).toContain('<html lang="de-CH">');
      expect(page.text).toContain('<title>Daily events</title>');
      // Discovery names the configured public URL, never the address the request came to.
      const href = /<link rel="alternate" type="application\/json\+oembed" href="([^"]+)"/.exec(
        page.text,
      )?.[1];
      expect(href?.replaceAll('&amp;', '&')).toBe(
        `${PUBLIC_URL}/oembed?url=${encodeURIComponent(`${PUBLIC_URL}/embed/${id}?range=30d&theme=dark&height=420&locale=de-CH`)}&format=json`,
      );
      expect(page.text).not.toContain(new URL(edge.url).host);
      // An id without an audience may be framed anywhere, as the element may be shown anywhere.
      const open = await embedPage(await publicId(`embed-${hex(3)}`));
      expect(open.status).toBe(200);
      expect(open.csp.get('frame-ancestors')).toEqual(['*']);
      expect(open.text).toContain('height="300"');
      expect(open.text).toMatch(
        / endpoint="\.\.\/embed-data\/[A-Za-z0-9_.~-]+\/"><\/analytics-chart>/,
      );
      expect(open.text).toContain('<html lang="en">');
      // The page itself asks the backend nothing: the element fetches the data.
      expect(tap.calls.length).toBe(calls);
    });

    it('admits a sandboxed frame (Origin: null) only with the ticket of its own embed page', async () => {
      const blogOrigin = 'https://blog.example.com';
      const tenant = `framed-${hex(3)}`;
      const signed = await signer.sign({
        query: 'public-total',
        params: { tenant },
        public: true,
        audience: blogOrigin,
      });
      const other = await signer.sign({
        query: 'public-total',
        params: { tenant },
        public: true,
        audience: blogOrigin,
      });
      const ticketOf = async (id: string) => {
        const page = await embedPage(id);
        expect(page.status, page.text).toBe(200);
        const endpoint = /endpoint="\.\.\/embed-data\/([^"/]+)\/"/.exec(page.text)?.[1];
        expect(endpoint).toBeDefined();
        return endpoint as string;
      };
      const ticket = await ticketOf(signed.id);
      const framed = (
        t: string,
        id = signed.id,
        origin = 'null',
        extra: Record<string, string> = {},
      ) =>
        call(`/embed-data/${t}/api/data`, {
          headers: { authorization: `Bearer ${id}`, origin, ...extra },
        });
      // The preflight of a sandboxed frame's request is answered without credentials.
      const preflight = await call(`/embed-data/${ticket}/api/data`, {
        method: 'OPTIONS',
        headers: {
          origin: 'null',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
      expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
      expect(preflight.headers.get('access-control-allow-headers')).toMatch(/authorization/i);
      const calls = tap.calls.length;
      const good = await framed(ticket);
      expect(good.status, good.text).toBe(200);
      expect(good.headers.get('access-control-allow-origin')).toBe('*');
      // The same id from a sandboxed frame without the page: refused, the author told why.
      const bare = await data(signed.id, { headers: { origin: 'null' } });
      expectRefused(bare, 403, 'forbidden');
      expect(String(bare.json().error)).toMatch(/embed page/);
      // A real origin outside the audience is refused whatever ticket it shows.
      const elsewhere = await framed(ticket, signed.id, 'https://evil.example');
      expectRefused(elsewhere, 403, 'forbidden');
      // And the route grants CORS to sandboxed frames only: another origin's preflight gets none.
      const foreign = await call(`/embed-data/${ticket}/api/data`, {
        method: 'OPTIONS',
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
      });
      expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
      expect(elsewhere.headers.get('access-control-allow-origin')).toBeNull();
      expect(String(elsewhere.json().error)).toContain('--aud https://evil.example');
      const jti = signed.claims.jti;
      const exp = now() + 600;
      // Tried on a third id, so that each id's per-address bucket holds every request.
      const third = await signer.sign({
        query: 'public-total',
        params: { tenant },
        public: true,
        audience: blogOrigin,
      });
      const thirdTicket = await ticketOf(third.id);
      const refusals = [
        'no-ticket',
        '%ZZ~x~y~z',
        'a.b.c.d',
        // Signed with a key the edge does not hold, or for another id, or another address.
        forgeTicket('current', hex(24), { exp, jti: third.claims.jti, address: ip }),
        forgeTicket('current', current.secret, { exp, jti: other.claims.jti, address: ip }),
        forgeTicket('current', current.secret, { exp, jti: third.claims.jti, address: '10.9.9.9' }),
        forgeTicket('retired', current.secret, { exp, jti: third.claims.jti, address: ip }),
        `${thirdTicket.split('~').slice(0, 3).join('~')}~${'A'.repeat(43)}`,
        // A good ticket of another id.
        ticket,
      ];
      for (const attempt of refusals) {
        expectRefused(await framed(attempt, third.id), 403, 'forbidden');
      }
      expect((await framed(thirdTicket, third.id)).status).toBe(200);
      // The good ticket of another id's page, the other way round.
      expectRefused(await framed(await ticketOf(other.id)), 403, 'forbidden');
      // The ticket of another address is refused, even the page's own.
      expectRefused(
        await framed(ticket, signed.id, 'null', { 'x-forwarded-for': `${ip}.2` }),
        403,
        'forbidden',
      );
      // Expired: the viewer is told to reload.
      const stale = await framed(
        forgeTicket('current', current.secret, { exp: now() - 1, jti, address: ip }),
      );
      expectRefused(stale, 403, 'forbidden');
      expect(String(stale.json().error)).toMatch(/reload/);
      // The format the edge documents is the one it checks: a hand-made ticket admits.
      const handMade = forgeTicket('current', current.secret, { exp, jti, address: ip });
      expect((await framed(handMade)).status).toBe(200);
      // An id without an audience: its page's route still wants the ticket from a sandboxed
      // frame (it grants that frame CORS whatever allowedOrigins says); /api/data is as before.
      const open = await signer.sign({ query: 'public-total', params: { tenant }, public: true });
      const openTicket = await ticketOf(open.id);
      expect((await framed(openTicket, open.id)).status).toBe(200);
      expectRefused(await framed('no-ticket', open.id), 403, 'forbidden');
      expectRefused(await framed(ticket, open.id), 403, 'forbidden');
      expect((await data(open.id, { headers: { origin: 'null' } })).status).toBe(200);
      // One backend call at most: the admitted answers share the tenant's cached result.
      expect(tap.calls.length - calls).toBeLessThanOrEqual(1);
    });

    it('limits embed options to what the definition allows', async () => {
      const id = (
        await signer.sign({ query: 'public-daily', params: { tenant: 'acme' }, public: true })
      ).id;
      for (const [query, sentence] of [
        ['?range=90d', /range &#39;90d&#39; is not allowed for this chart; choose one of 7d, 30d/],
        ['?range=7d&range=30d', /Give range once/],
        ['?colour=red', /Unknown option &#39;colour&#39;/],
        ['?theme=pink', /theme/],
        ['?height=20', /height/],
        ['?height=12px', /height is a whole number of pixels/],
        ['?locale=not_a_locale!', /locale is a BCP 47 language tag/],
      ] as const) {
        expectErrorPage(await embedPage(id, query), 400, sentence);
      }
      const single = await publicId(`embed-${hex(3)}`);
      expectErrorPage(await embedPage(single, '?range=7d'), 400, /no ranges to choose from/);
      expect((await embedPage(id, '?range=7d&theme=auto')).status).toBe(200);
    });

    it('refuses session-bound, expired, revoked and invalid ids on the embed page with a styled page', async () => {
      const calls = tap.calls.length;
      const { id: bound } = await signAs('alice', 'acme');
      const refusedBound = await embedPage(bound);
      expectErrorPage(refusedBound, 403, /only for a signed-in viewer/);
      const t = now();
      expectErrorPage(
        await embedPage(
          forgeToken(header(), publicClaims({ iat: t - 700, exp: t - 100 }), current.secret),
        ),
        401,
        /has expired/,
      );
      const revoked = await embedPage(
        forgeToken(
          header(),
          publicClaims({ jti: REVOKED_JTI, aud: 'https://blog.example.com' }),
          current.secret,
        ),
      );
      expectErrorPage(revoked, 401, /not valid/);
      // A good signature's audience still holds for its error page.
      expect(revoked.csp.get('frame-ancestors')).toEqual(['https://blog.example.com']);
      expectErrorPage(
        await embedPage(forgeToken(header(), publicClaims(), hex(24))),
        401,
        /not valid/,
      );
      expectErrorPage(await embedPage('not-a-jwt', '?theme=dark'), 401, /not valid/);
      expect((await embedPage('not-a-jwt', '?theme=dark')).text).toContain('class="error dark"');
      expectErrorPage(
        await embedPage(forgeToken(header(), publicClaims({ q: 'dropped' }), current.secret)),
        404,
        /no longer exists/,
      );
      const tampered = `${parts(await publicId('acme'))[0]}.${b64url(publicClaims({ p: { tenant: 'globex' } }))}.${parts(await publicId('acme'))[2]}`;
      expectErrorPage(await embedPage(tampered), 401, /not valid/);
      expect(tap.calls.length).toBe(calls);
    });

    it('counts embed pages in the data route’s per-id and per-address buckets', async () => {
      const id = await publicId(`embed-limit-${hex(3)}`);
      for (let i = 0; i < TEST_LIMITS.perId.burst; i++) {
        expect((await embedPage(id)).status).toBe(200);
      }
      expectRefused(await data(id), 429, 'rate_limited');
      const limited = await embedPage(id);
      expectErrorPage(limited, 429, /Too many requests/);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      // Another address has its own bucket for the same public id.
      expect(
        (await call(`/embed/${id}`, { headers: { 'x-forwarded-for': `${ip}.9` } })).status,
      ).toBe(200);
    });

    it('answers oEmbed for its own embed URLs only, honouring maxwidth and maxheight', async () => {
      const id = (
        await signer.sign({
          query: 'public-daily',
          params: { tenant: `oembed-${hex(3)}` },
          public: true,
          ttl: '2d',
        })
      ).id;
      const oembed = (url: string, extra = '') =>
        call(`/oembed?url=${encodeURIComponent(url)}${extra}`);
      const url = `${PUBLIC_URL}/embed/${id}?range=7d&height=400`;
      const plain = await oembed(url, '&format=json');
      expect(plain.status, plain.text).toBe(200);
      expect(plain.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(plain.headers.get('access-control-allow-origin')).toBe('*');
      const body = plain.json();
      expect(body).toMatchObject({
        version: '1.0',
        type: 'rich',
        title: 'Daily events',
        provider_url: PUBLIC_URL,
        width: 600,
        height: 400,
      });
      expect(body.cache_age).toBe(86_400);
      const frame =
        /^<iframe src="([^"]+)" title="Daily events" width="(\d+)" height="(\d+)"[^>]*><\/iframe>$/.exec(
          String(body.html),
        );
      expect(frame?.[1]?.replaceAll('&amp;', '&')).toBe(url);
      expect([Number(frame?.[2]), Number(frame?.[3])]).toEqual([600, 400]);
      const fitted = (await oembed(url, '&maxwidth=320&maxheight=250')).json();
      expect([fitted.width, fitted.height]).toEqual([320, 250]);
      expect(String(fitted.html)).toContain(
        `src="${PUBLIC_URL}/embed/${id}?range=7d&amp;height=250"`,
      );
      expect(String(fitted.html)).toContain('width="320" height="250"');
      expect((await oembed(url, '&maxwidth=2000&maxheight=900')).json()).toMatchObject({
        width: 2000,
        height: 400,
      });
      // What the oEmbed spec asks: 501 for another format, 404 for URLs it does not serve, 401
      // for a private resource.
      expect((await oembed(url, '&format=xml')).status).toBe(501);
      const { id: bound } = await signAs('alice', 'acme');
      expectRefused(await oembed(`${PUBLIC_URL}/embed/${bound}`), 401, 'forbidden');
      for (const elsewhere of [
        `${edge.url}/embed/${id}`,
        `https://evil.example/analytics/embed/${id}`,
        `${PUBLIC_URL}/api/data`,
        `${PUBLIC_URL}/embed/${id}/more`,
        `${PUBLIC_URL}/embed/not-a-jwt`,
        `${PUBLIC_URL}/embed/${forgeToken(header(), publicClaims({ jti: REVOKED_JTI }), current.secret)}`,
        `${PUBLIC_URL}/embed/${id}?range=90d`,
        'not a url',
      ]) {
        expectRefused(await oembed(elsewhere), 404, 'not_found');
      }
      expectRefused(await oembed(url, '&maxheight=40'), 404, 'not_found');
      // An id with an audience: WordPress names the asking site in its User-Agent.
      const blogOnly = (
        await signer.sign({
          query: 'public-daily',
          params: { tenant: `oembed-${hex(3)}` },
          public: true,
          audience: 'https://blog.example.com',
        })
      ).id;
      const asking = (site: string) =>
        call(`/oembed?url=${encodeURIComponent(`${PUBLIC_URL}/embed/${blogOnly}`)}`, {
          headers: { 'user-agent': `WordPress/6.1.1; ${site}` },
        });
      expect((await asking('https://blog.example.com')).status).toBe(200);
      expect((await asking('https://blog.example.com/news')).status).toBe(200);
      const refused = await asking('https://other.example/blog');
      expectRefused(refused, 403, 'forbidden');
      expect(refused.json().error).toBe(
        "This chart's id does not allow the site https://other.example: ask for an id made with --aud https://other.example.",
      );
      expect(refused.headers.get('access-control-allow-origin')).toBe('*');
      // An asker that does not say who it is gets the frame; the browser's frame-ancestors decides.
      expect(
        (await call(`/oembed?url=${encodeURIComponent(`${PUBLIC_URL}/embed/${blogOnly}`)}`)).status,
      ).toBe(200);
      expectRefused(await oembed(url, '&maxwidth=wide'), 400, 'bad_request');
      expectRefused(await call('/oembed?format=json'), 400, 'bad_request');
    });

    it('serves the resize scripts of embeds as cacheable, sandboxed script files', async () => {
      for (const path of ['/embed.js', '/embed-frame.js']) {
        const script = await call(path);
        expect(script.status).toBe(200);
        expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
        expect(script.headers.get('x-content-type-options')).toBe('nosniff');
        expect(script.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
        expect(script.text).toContain("'analytics-chart:resize'");
      }
      expect((await call('/embed.js')).text).toContain('event.origin !== origin');
    });

    it('never lets the key or a signing secret out, in any response or log line', async () => {
      expect(seen.length).toBeGreaterThan(50);
      expect(edge.logs.length).toBeGreaterThan(5);
      const secrets = [CANARY_KEY, current.secret, previous.secret, SESSION_SECRET];
      for (const response of seen) {
        for (const secret of secrets) {
          expect(response.text).not.toContain(secret);
          for (const [name, value] of response.headers)
            expect(`${name}: ${value}`).not.toContain(secret);
        }
        // 501 is oEmbed's own answer to a format other than JSON, and only there.
        if (!response.path.startsWith('/oembed?')) expect(response.status).not.toBe(501);
        expect([500, 503]).not.toContain(response.status);
        if (response.status !== 204 && !serverRefusal(response)) {
          expect(response.headers.get('x-content-type-options'), String(response.status)).toBe(
            'nosniff',
          );
          expect(response.headers.get('referrer-policy')).toBe('no-referrer');
        }
      }
      for (const line of edge.logs)
        for (const secret of secrets) expect(line).not.toContain(secret);
      // Logs name ids by jti or fingerprint, never whole: no log line holds a JWT.
      for (const line of edge.logs) expect(line).not.toMatch(/eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+/);
    });
  });
}
