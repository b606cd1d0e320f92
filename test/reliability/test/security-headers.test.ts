/**
 * Item 7: the security headers the edge documents (README "Protection") on every kind of answer
 * of a running edge process: data (200, 304, every refusal, 429, 502, 504), sign, renew, the
 * bundle (plain and hashed, 200 and 304), health, unknown routes, CORS preflights, and the CMS
 * embeds (the embed page and its refusals, oEmbed, the resize scripts). And the
 * element's bundle is CSP-friendly: no eval or string-compiled code, no inline style attributes
 * or inline handlers, styles through constructable stylesheets.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ServerProcess } from '../src/child-process.ts';
import { type FaultService, startFaultService } from '../src/fault-service.ts';
import { type Cell, reportFigures } from '../src/figures.ts';
import { forgeJwt, publicId, sessionCookie, sessionId } from '../src/forge-jwt.ts';
import { rawRequest } from '../src/raw-http.ts';
import { ELEMENT_BUNDLE, REPO_ROOT } from '../src/repo-paths.ts';
import {
  type EngineUnderTest,
  newEdgeSecrets,
  startEdge,
  startSeededEngine,
} from '../src/system-under-test.ts';

/** What the edge's README promises on JSON API answers. */
const API = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
};
/** And on the bundle, a module script any origin may load. */
const BUNDLE = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'cross-origin',
  'access-control-allow-origin': '*',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'; sandbox",
};
const APP = 'https://app.example.com';
/** The edge's configured public URL (`publicUrl`): what oEmbed answers name. */
const PUBLIC_URL = 'https://charts.example.com/analytics';
/** On the embed page and its error pages, besides a CSP of their own. */
const PAGE = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'cross-origin',
  'cache-control': 'no-store',
  'content-type': 'text/html; charset=utf-8',
};
/** The resize scripts: files like the bundle, cacheable for an hour. */
const SCRIPT = { ...BUNDLE, 'cache-control': 'public, max-age=3600' };

let engine: EngineUnderTest;
let service: FaultService;
let edge: ServerProcess;
const secrets = newEdgeSecrets();
const rows: Cell[][] = [];

beforeAll(async () => {
  if (!existsSync(ELEMENT_BUNDLE)) {
    execFileSync('pnpm', ['--filter', '@analytics-chart/element', 'build'], {
      cwd: REPO_ROOT,
      stdio: 'ignore',
    });
  }
  engine = await startSeededEngine(200);
  service = await startFaultService(engine.url);
  edge = await startEdge(
    secrets,
    { url: service.url, apiKey: engine.apiKey },
    {
      allowedOrigins: [APP, '*'],
      timeoutMs: 300,
      retries: 0,
      settings: { rateLimit: { perId: { perSecond: 0.001, burst: 3 } }, publicUrl: PUBLIC_URL },
    },
  );
}, 180_000);

afterAll(async () => {
  reportFigures(
    'security-headers',
    'Security headers on every kind of edge answer',
    ['answer', 'status', 'headers checked', 'result'],
    rows,
  );
  await edge?.stop();
  await service?.close();
  await engine?.close();
});

type Expected = Record<string, string>;

async function check(
  name: string,
  request: Parameters<typeof rawRequest>[1],
  status: number,
  expected: Expected = API,
): Promise<Awaited<ReturnType<typeof rawRequest>>> {
  const answer = await rawRequest(edge.url, request);
  const missing = Object.entries(expected)
    .filter(([header, value]) => answer.headers[header] !== value)
    .map(([header]) => header);
  const leaks = ['x-powered-by', 'server'].filter((h) => answer.headers[h] !== undefined);
  rows.push([
    name,
    answer.status,
    Object.keys(expected).length,
    missing.length ? `missing ${missing.join(', ')}` : 'all present',
  ]);
  expect(answer.status, name).toBe(status);
  expect(leaks, `${name}: version-revealing headers`).toEqual([]);
  expect(missing, `${name}: missing headers`).toEqual([]);
  if (answer.status >= 400) {
    expect(answer.headers['content-type'], name).toMatch(/^application\/json/);
    expect(Object.keys(JSON.parse(answer.text)).sort(), name).toEqual(['code', 'error']);
  }
  return answer;
}

/**
 * An embed page answer: the page headers, and a CSP with no inline script, framing by `ancestors`.
 * Refusals are styled HTML pages here, not JSON.
 */
async function checkPage(
  name: string,
  request: Parameters<typeof rawRequest>[1],
  status: number,
  ancestors: string,
): Promise<Awaited<ReturnType<typeof rawRequest>>> {
  const answer = await rawRequest(edge.url, request);
  const missing = Object.entries(PAGE)
    .filter(([header, value]) => answer.headers[header] !== value)
    .map(([header]) => header);
  const csp = answer.headers['content-security-policy'] ?? '';
  const policy = [
    "default-src 'none'",
    "script-src 'self'",
    "connect-src 'self'",
    "base-uri 'none'",
    `frame-ancestors ${ancestors}`,
  ].filter((directive) => !csp.split('; ').includes(directive));
  if (csp.includes('unsafe')) policy.push('unsafe-…');
  rows.push([
    name,
    answer.status,
    Object.keys(PAGE).length + 5,
    [...missing, ...policy].length
      ? `missing ${[...missing, ...policy].join(', ')}`
      : 'all present',
  ]);
  expect(answer.status, name).toBe(status);
  expect(missing, `${name}: missing headers`).toEqual([]);
  expect(policy, `${name}: CSP`).toEqual([]);
  expect(['x-powered-by', 'server'].filter((h) => answer.headers[h] !== undefined)).toEqual([]);
  expect(answer.text).toMatch(status === 200 ? /<analytics-chart / : /Chart unavailable/);
  return answer;
}

const get = (path: string, headers: Record<string, string> = {}) => ({
  method: 'GET',
  path,
  headers: Object.entries(headers) as Array<[string, string]>,
});
const post = (path: string, body: string, headers: Record<string, string> = {}) => ({
  method: 'POST',
  path,
  headers: Object.entries({ 'Content-Type': 'application/json', ...headers }) as Array<
    [string, string]
  >,
  body,
});

describe('every answer of the edge', () => {
  test('data route: 200, 304 and every refusal', async () => {
    // A fresh id per request: the per-id bucket of this edge holds 3 (for the 429 below).
    const fresh = () => ({
      Authorization: `Bearer ${publicId(secrets.key, 'public-count', { tenant: 'acme' })}`,
    });
    const auth = fresh();
    const ok = await check('GET /api/data 200', get('/api/data', auth), 200);
    await check(
      'GET /api/data 304 (If-None-Match)',
      get('/api/data', { ...auth, 'If-None-Match': ok.headers.etag ?? '' }),
      304,
    );
    await check(
      'GET /api/data 200 from an allowed origin',
      get('/api/data', { ...fresh(), Origin: APP }),
      200,
      {
        ...API,
        'access-control-allow-origin': APP,
        'access-control-allow-credentials': 'true',
      },
    );
    await check(
      'GET /api/data 200 from any origin (public id, *)',
      get('/api/data', {
        Authorization: `Bearer ${publicId(secrets.key, 'public-count', { tenant: 'globex' })}`,
        Origin: 'https://cms.example.org',
      }),
      200,
      {
        ...API,
        'access-control-allow-origin': '*',
      },
    );
    await check('GET /api/data 401 no id', get('/api/data'), 401);
    await check(
      'GET /api/data 401 forged id',
      get('/api/data', {
        Authorization: `Bearer ${forgeJwt({ alg: 'none', kid: 'k1' }, { q: 'public-count' }, null)}`,
      }),
      401,
    );
    await check(
      'GET /api/data 401 expired',
      get('/api/data', {
        Authorization: `Bearer ${publicId(secrets.key, 'public-count', { tenant: 'acme' }, { iat: 1, exp: 2 })}`,
      }),
      401,
    );
    await check('GET /api/data 400 unknown viewer option', get('/api/data?x=1', fresh()), 400);
    await check(
      'GET /api/data 403 other session',
      get('/api/data', {
        Authorization: `Bearer ${sessionId(secrets.key, 'daily', 'alice', { tenant: 'acme' })}`,
        Cookie: sessionCookie(secrets.sessionSecret, 'bob', 'globex'),
      }),
      403,
    );
    await check(
      'GET /api/data 404 query gone from the registry',
      get('/api/data', {
        Authorization: `Bearer ${publicId(secrets.key, 'no-such-query', { tenant: 'acme' })}`,
      }),
      404,
    );
    const limited = {
      Authorization: `Bearer ${publicId(secrets.key, 'public-count', { tenant: 'initech' })}`,
    };
    for (let i = 0; i < 3; i++) await rawRequest(edge.url, get('/api/data', limited));
    const tooMany = await check('GET /api/data 429 rate limited', get('/api/data', limited), 429);
    expect(Number(tooMany.headers['retry-after'])).toBeGreaterThan(0);
    service.set({ kind: 'status', status: 500, body: { error: 'down' } });
    await check(
      'GET /api/data 502 backend failed',
      get('/api/data', {
        Authorization: `Bearer ${publicId(secrets.key, 'public-count', { tenant: 'fail-502' })}`,
      }),
      502,
    );
    service.set({ kind: 'hang' });
    await check(
      'GET /api/data 504 backend timed out',
      get('/api/data', {
        Authorization: `Bearer ${publicId(secrets.key, 'public-count', { tenant: 'fail-504' })}`,
      }),
      504,
    );
    service.set({ kind: 'ok' });
  });

  test('sign and renew', async () => {
    const cookie = sessionCookie(secrets.sessionSecret, 'alice', 'acme');
    const signed = await check(
      'POST /api/sign 200',
      post('/api/sign', '{"query":"daily"}', { Cookie: cookie }),
      200,
    );
    await check('POST /api/sign 401 no session', post('/api/sign', '{"query":"daily"}'), 401);
    await check(
      'POST /api/sign 415 not JSON',
      post('/api/sign', 'query=daily', { Cookie: cookie, 'Content-Type': 'text/plain' }),
      415,
    );
    await check(
      'POST /api/sign 413 too large',
      post('/api/sign', JSON.stringify({ query: 'x'.repeat(20_000) }), { Cookie: cookie }),
      413,
    );
    await check(
      'POST /api/sign 400 bad body',
      post('/api/sign', '{"query":1}', { Cookie: cookie }),
      400,
    );
    await check(
      'POST /api/sign 200 from an allowed origin',
      post('/api/sign', '{"query":"daily"}', { Cookie: cookie, Origin: APP }),
      200,
      {
        ...API,
        'access-control-allow-origin': APP,
        'access-control-allow-credentials': 'true',
      },
    );
    await check(
      'POST /api/renew 200',
      post('/api/renew', JSON.stringify({ id: JSON.parse(signed.text).id }), { Cookie: cookie }),
      200,
    );
    await check(
      'POST /api/renew 403 other user',
      post('/api/renew', JSON.stringify({ id: JSON.parse(signed.text).id }), {
        Cookie: sessionCookie(secrets.sessionSecret, 'bob', 'acme'),
      }),
      403,
    );
    await check(
      'POST /api/renew 401 invalid id',
      post('/api/renew', '{"id":"a.b.c"}', { Cookie: cookie }),
      401,
    );
  });

  test('bundle, health, unknown routes', async () => {
    const bundle = await check(
      'GET /analytics-chart.js 200',
      get('/analytics-chart.js'),
      200,
      BUNDLE,
    );
    expect(bundle.headers['content-type']).toMatch(/^text\/javascript/);
    await check(
      'GET /analytics-chart.js 304',
      get('/analytics-chart.js', { 'If-None-Match': bundle.headers.etag ?? '' }),
      304,
      BUNDLE,
    );
    // The content-hashed name (16 hex digits of the bundle's SHA-256), immutable; another is 404.
    const hash = createHash('sha256')
      .update(readFileSync(ELEMENT_BUNDLE))
      .digest('hex')
      .slice(0, 16);
    const hashed = await check(
      `GET /analytics-chart.<hash>.js 200`,
      get(`/analytics-chart.${hash}.js`),
      200,
      BUNDLE,
    );
    expect(hashed.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    await check(
      'GET /analytics-chart.<other hash>.js 404',
      get(
        `/analytics-chart.${hash === 'ffffffffffffffff' ? '0000000000000000' : 'ffffffffffffffff'}.js`,
      ),
      404,
    );
    await check('GET /health 200', get('/health'), 200);
    await check('GET /nope 404', get('/nope'), 404);
    await check('PUT /api/data 405', { method: 'PUT', path: '/api/data' }, 405);
  });

  test('CMS embeds: the embed page and its refusals, oEmbed, the resize scripts', async () => {
    const blog = 'https://blog.example.org';
    const id = publicId(secrets.key, 'public-daily', { tenant: 'acme' }, { aud: blog });
    await checkPage('GET /embed/<id> 200', get(`/embed/${id}?range=7d&theme=dark`), 200, blog);
    await checkPage(
      'GET /embed/<id without aud> 200',
      get(`/embed/${publicId(secrets.key, 'public-daily', { tenant: 'acme' })}`),
      200,
      '*',
    );
    await checkPage('GET /embed/<id> 400 bad option', get(`/embed/${id}?range=1y`), 400, blog);
    await checkPage('GET /embed/<forged> 401', get('/embed/a.b.c'), 401, '*');
    await checkPage(
      'GET /embed/<expired> 401',
      get(
        `/embed/${publicId(secrets.key, 'public-daily', { tenant: 'acme' }, { iat: 1, exp: 2, aud: blog })}`,
      ),
      401,
      // An expired id's claims are not read: its error page, which shows nothing, may be framed.
      '*',
    );
    await checkPage(
      'GET /embed/<session-bound> 403',
      get(`/embed/${sessionId(secrets.key, 'daily', 'alice', { tenant: 'acme' })}`),
      403,
      '*',
    );
    const limited = publicId(secrets.key, 'public-count', { tenant: 'embed-limit' });
    for (let i = 0; i < 3; i++) await rawRequest(edge.url, get(`/embed/${limited}`));
    const tooMany = await checkPage('GET /embed/<id> 429', get(`/embed/${limited}`), 429, '*');
    expect(Number(tooMany.headers['retry-after'])).toBeGreaterThan(0);
    const oembed = (url: string, extra = '') =>
      get(`/oembed?url=${encodeURIComponent(url)}${extra}`);
    const open = publicId(secrets.key, 'public-count', { tenant: 'oembed' });
    const answer = await check('GET /oembed 200', oembed(`${PUBLIC_URL}/embed/${open}`), 200, {
      ...API,
      'access-control-allow-origin': '*',
    });
    expect(JSON.parse(answer.text)).toMatchObject({ version: '1.0', type: 'rich' });
    await check('GET /oembed 404 not ours', oembed(`https://evil.example/embed/${open}`), 404, {
      ...API,
      'access-control-allow-origin': '*',
    });
    const xml = await rawRequest(edge.url, oembed(`${PUBLIC_URL}/embed/${open}`, '&format=xml'));
    rows.push(['GET /oembed 501 format=xml', xml.status, 1, xml.status === 501 ? 'ok' : 'WRONG']);
    expect(xml.status).toBe(501);
    for (const [header, value] of Object.entries(API)) expect(xml.headers[header]).toBe(value);
    for (const path of ['/embed.js', '/embed-frame.js']) {
      const script = await check(`GET ${path} 200`, get(path), 200, SCRIPT);
      expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    }
  });

  test('the embed studio: its page, files and API', async () => {
    const STUDIO = {
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cross-origin-resource-policy': 'same-origin',
      'content-security-policy':
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    };
    /** A studio page or file: its headers and content type, whatever the status. */
    const file = async (
      name: string,
      request: Parameters<typeof rawRequest>[1],
      status: number,
      type: string,
    ) => {
      const answer = await rawRequest(edge.url, request);
      const expected: Expected = { ...STUDIO, 'content-type': type };
      const missing = Object.entries(expected)
        .filter(([header, value]) => answer.headers[header] !== value)
        .map(([header]) => header);
      rows.push([
        name,
        answer.status,
        Object.keys(expected).length,
        missing.length ? `missing ${missing.join(', ')}` : 'all present',
      ]);
      expect(answer.status, name).toBe(status);
      expect(missing, `${name}: missing headers`).toEqual([]);
      expect(['x-powered-by', 'server'].filter((h) => answer.headers[h] !== undefined)).toEqual([]);
      return answer;
    };
    const alice = { Cookie: sessionCookie(secrets.sessionSecret, 'alice', 'acme') };
    const bob = { Cookie: sessionCookie(secrets.sessionSecret, 'bob', 'globex') };
    const html = 'text/html; charset=utf-8';
    const page = await file('GET /studio 200', get('/studio', alice), 200, html);
    expect(page.text).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    await file('GET /studio 401 no session', get('/studio'), 401, html);
    await file('GET /studio.js 200', get('/studio.js'), 200, 'text/javascript; charset=utf-8');
    await file('GET /studio.css 200', get('/studio.css'), 200, 'text/css; charset=utf-8');
    await check('GET /api/studio/charts 200', get('/api/studio/charts', alice), 200);
    await check('GET /api/studio/charts 401', get('/api/studio/charts'), 401);
    await check(
      'POST /api/studio/preview 200',
      post('/api/studio/preview', '{"query":"public-daily"}', alice),
      200,
    );
    const minted = await check(
      'POST /api/studio/embeds 201',
      post('/api/studio/embeds', '{"query":"public-daily","label":"Home","ttl":"7d"}', alice),
      201,
    );
    await check(
      'POST /api/studio/embeds 400',
      post('/api/studio/embeds', '{"query":"public-daily","label":"<b>","ttl":"7d"}', alice),
      400,
    );
    await check(
      'POST /api/studio/embeds 415',
      post('/api/studio/embeds', 'query=public-daily', { ...alice, 'Content-Type': 'text/plain' }),
      415,
    );
    await check('GET /api/studio/embeds 200', get('/api/studio/embeds', alice), 200);
    const { jti } = JSON.parse(minted.text) as { jti: string };
    await check(
      'POST /api/studio/embeds/<jti>/revoke 404 another tenant',
      post(`/api/studio/embeds/${jti}/revoke`, '{}', bob),
      404,
    );
    await check(
      'POST /api/studio/embeds/<jti>/revoke 200',
      post(`/api/studio/embeds/${jti}/revoke`, '{}', alice),
      200,
    );
    await check('PUT /api/studio/embeds 405', { ...get('/api/studio/embeds'), method: 'PUT' }, 405);
  });

  test('CORS preflights', async () => {
    const preflight = (path: string, origin: string) => ({
      method: 'OPTIONS',
      path,
      headers: [
        ['Origin', origin],
        ['Access-Control-Request-Method', path === '/api/data' ? 'GET' : 'POST'],
        ['Access-Control-Request-Headers', 'authorization, content-type'],
      ] as Array<[string, string]>,
    });
    for (const path of ['/api/data', '/api/sign', '/api/renew']) {
      const allowed = await check(`OPTIONS ${path} from ${APP}`, preflight(path, APP), 204);
      expect(allowed.headers['access-control-allow-origin']).toBe(APP);
      const other = await check(
        `OPTIONS ${path} from an unlisted origin`,
        preflight(path, 'https://evil.example'),
        204,
      );
      // A browser sends a credentialed request only when the origin is echoed (or '*' without
      // credentials, which then carries no cookie): an unlisted origin gets neither with cookies.
      const acao = other.headers['access-control-allow-origin'];
      expect(acao).not.toBe('https://evil.example');
      if (acao === '*') expect(other.headers['access-control-allow-credentials']).toBeUndefined();
      if (path !== '/api/data') expect(acao).toBeUndefined();
    }
  });
});

describe('the element bundle is CSP-friendly', () => {
  test('no eval or code from strings, no inline styles or handlers; styles are constructable', () => {
    const code = readFileSync(ELEMENT_BUNDLE, 'utf8');
    const count = (pattern: RegExp) => code.match(pattern)?.length ?? 0;
    const scan: Array<[string, number, number]> = [
      // [what, found, allowed]
      ['eval(…)', count(/(^|[^.\w$])eval\s*\(/g), 0],
      ['new Function / Function(…)', count(/(^|[^.\w$])(new\s+)?Function\s*\(/g), 0],
      ['setTimeout/setInterval with a string', count(/set(Timeout|Interval)\(\s*["'`]/g), 0],
      ['inline style="…" in markup', count(/<[a-z][^<>]*\sstyle\s*=/gi), 0],
      ['setAttribute("style", …)', count(/setAttribute\(\s*["'`]style["'`]/g), 0],
      ['inline on…= handlers in markup', count(/<[a-z][^<>]*\son[a-z]+\s*=/gi), 0],
      ['javascript: URLs', count(/["'`]javascript:/gi), 0],
      // Lit adopts constructable stylesheets; its <style> fallback (with the page's nonce) is
      // only for browsers without them.
      [
        'createElement("style") (Lit fallback only)',
        count(/createElement\(\s*["'`]style["'`]\s*\)/g),
        1,
      ],
    ];
    for (const [what, found, allowed] of scan)
      rows.push([
        `bundle: ${what}`,
        '',
        allowed,
        found <= allowed ? `${found} (ok)` : `${found} FOUND`,
      ]);
    rows.push([
      'bundle: adoptedStyleSheets + CSSStyleSheet.replaceSync',
      '',
      '',
      code.includes('adoptedStyleSheets') && code.includes('replaceSync') ? 'used' : 'MISSING',
    ]);
    for (const [what, found, allowed] of scan) expect(found, what).toBeLessThanOrEqual(allowed);
    expect(code).toContain('adoptedStyleSheets');
    expect(code).toContain('replaceSync');
  });
});
