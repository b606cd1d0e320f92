/**
 * A stand-in for the edge's browser-facing routes, as Koa middleware of the test runner's dev
 * server: `GET …/api/data` and `POST …/api/renew` on real sockets, in the edge's wire format (JSON
 * payload with a strong ETag and 304 on `If-None-Match`, `{error, code}` failures, `Retry-After` on
 * 429). The bearer id is a script for the response: `<fixture>` or `<fixture>;<directive>;…`:
 *
 *   log=<key>      record each request under <key> (read back from GET /__fixture/log?key=<key>)
 *   fail=<code>    answer every request with that edge error (expired, forbidden, rate_limited…)
 *   drop=<n>       break the first n connections mid-response (a network failure)
 *   limit=<n>      answer the first n requests with 429 and Retry-After: 1
 *   delay=<ms>     wait before answering (abort tests)
 *   expired        401 expired; /api/renew turns the id into the same id without `expired`
 *   expireAfter=<n> answer normally n times, then 401 expired (renewal drops this directive)
 *   renew=fail     /api/renew refuses this id (401 invalid)
 *   points=<n>     for fixture `generated`: a Single Line with n buckets
 *
 * With `?range=<r>` the payload's title gets ` (<r>)` appended, so tests can see the option arrive.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { EDGE_ERROR_STATUS } from '@analytics-chart/protocol/edge-errors';

const FIXTURES = new URL('../fixtures/', import.meta.url);

const MESSAGE = {
  invalid: 'The query id is not valid.',
  expired: 'The query id has expired.',
  forbidden: 'This chart belongs to another account.',
  not_found: 'The query this id names does not exist (any more).',
  bad_request: "range 'x' is not allowed for this chart.",
  rate_limited: 'Too many requests for this chart; try again in a moment.',
  backend: 'The analytics service is unavailable.',
  timeout: 'The analytics service did not answer in time.',
};

function parseId(id) {
  const [fixture, ...rest] = id.split(';');
  const directives = {};
  for (const part of rest) {
    const [key, value = 'true'] = part.split('=');
    directives[key] = value;
  }
  return { fixture, directives };
}

function generated(points) {
  const labels = [];
  const values = [];
  const start = Date.UTC(2024, 0, 1);
  for (let i = 0; i < points; i++) {
    const d = new Date(start + i * 60_000);
    labels.push(d.toISOString().slice(0, 16).replace('T', ' '));
    values.push(Math.round(500 + 400 * Math.sin(i / 50) + ((i * 7919) % 97)));
  }
  return {
    graph: 'Single Line',
    title: `Generated (${points} points)`,
    granularity: 'Minute',
    timeZone: 'UTC',
    labels,
    series: [{ name: 'Count', values }],
    generatedAt: '2024-03-05T12:00:00.000Z',
    expiresAt: '2024-03-05T12:01:00.000Z',
  };
}

function loadPayload(fixture, directives) {
  if (fixture === 'generated') return generated(Number(directives.points ?? 1000));
  if (!/^[a-z0-9-]+$/.test(fixture)) return undefined;
  try {
    return JSON.parse(readFileSync(new URL(`${fixture}.json`, FIXTURES), 'utf8'));
  } catch {
    return undefined;
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The middleware and its request log (shared by every test file of one run). */
export function fixtureEdge() {
  const log = new Map();
  const counters = new Map();
  const count = (key) => {
    const n = (counters.get(key) ?? 0) + 1;
    counters.set(key, n);
    return n;
  };

  const json = (ctx, status, body, headers = {}) => {
    ctx.status = status;
    ctx.set({
      'Content-Type': 'application/json; charset=utf-8',
      'Cache-Control': status === 200 ? 'private, no-cache' : 'no-store',
      Vary: 'Authorization, Origin',
      ...headers,
    });
    ctx.body = JSON.stringify(body);
  };
  const fail = (ctx, code, headers) =>
    json(
      ctx,
      EDGE_ERROR_STATUS[code] ?? 500,
      { error: MESSAGE[code] ?? 'Failure.', code },
      headers,
    );

  return async function fixtureEdgeMiddleware(ctx, next) {
    const path = ctx.path;
    if (path === '/__fixture/log') {
      json(ctx, 200, log.get(ctx.query.key) ?? []);
      return;
    }
    const isData = path.endsWith('/api/data');
    const isRenew = path.endsWith('/api/renew');
    if (!isData && !isRenew) return next();

    let body;
    if (isRenew && ctx.method === 'POST') {
      const chunks = [];
      for await (const chunk of ctx.req) chunks.push(chunk);
      body = Buffer.concat(chunks).toString('utf8');
    }
    const auth = ctx.get('authorization');
    const id = isData
      ? auth.startsWith('Bearer ')
        ? auth.slice(7)
        : ''
      : (() => {
          try {
            return String(JSON.parse(body).id ?? '');
          } catch {
            return '';
          }
        })();
    const { fixture, directives } = parseId(id);
    const entry = {
      path,
      method: ctx.method,
      search: ctx.querystring,
      authorization: auth || null,
      accept: ctx.get('accept') || null,
      contentType: ctx.get('content-type') || null,
      ifNoneMatch: ctx.get('if-none-match') || null,
      cookie: ctx.get('cookie') || null,
      body: body ?? null,
      aborted: false,
      status: 0,
    };
    if (directives.log) {
      if (!log.has(directives.log)) log.set(directives.log, []);
      log.get(directives.log).push(entry);
    }
    ctx.res.on('close', () => {
      if (!ctx.res.writableFinished) entry.aborted = true;
    });

    if (isRenew) {
      if (ctx.method !== 'POST') return fail(ctx, 'bad_request');
      if (directives.renew === 'fail' || !id) return fail(ctx, 'invalid');
      const renewed = id
        .split(';')
        .filter((p) => p !== 'expired' && !p.startsWith('expireAfter='))
        .join(';');
      entry.status = 200;
      return json(ctx, 200, { id: renewed, expiresAt: '2099-01-01T00:00:00.000Z' });
    }

    if (ctx.method !== 'GET') return fail(ctx, 'bad_request');
    if (!auth.startsWith('Bearer ')) return fail(ctx, 'invalid');
    const n = count(id);
    if (directives.delay) await sleep(Number(directives.delay));
    if (ctx.res.destroyed) {
      // The browser hung up while we waited. Nothing is sent; the status only keeps the runner
      // from reporting Koa's default 404.
      ctx.status = 204;
      ctx.respond = false;
      return;
    }
    if (directives.drop && n <= Number(directives.drop)) {
      // Headers and half a body, then the connection dies: fetch or its body read fails.
      entry.status = -1;
      ctx.status = 204;
      ctx.respond = false;
      ctx.res.socket.end(
        'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"gra',
      );
      ctx.res.socket.destroy();
      return;
    }
    if (directives.limit && n <= Number(directives.limit)) {
      entry.status = 429;
      return fail(ctx, 'rate_limited', { 'Retry-After': '1' });
    }
    if (directives.expired || (directives.expireAfter && n > Number(directives.expireAfter))) {
      entry.status = 401;
      return fail(ctx, 'expired');
    }
    if (directives.fail) {
      entry.status = EDGE_ERROR_STATUS[directives.fail] ?? 500;
      return fail(
        ctx,
        directives.fail,
        directives.fail === 'rate_limited' ? { 'Retry-After': '30' } : {},
      );
    }
    const payload = loadPayload(fixture, directives);
    if (!payload) {
      entry.status = 404;
      return fail(ctx, 'not_found');
    }
    const range = new URLSearchParams(ctx.querystring).get('range');
    if (range) payload.title = `${payload.title ?? ''} (${range})`;
    const text = JSON.stringify(payload);
    const etag = `"${createHash('sha256').update(text).digest('hex').slice(0, 24)}"`;
    if (ctx.get('if-none-match') === etag) {
      entry.status = 304;
      ctx.status = 304;
      ctx.set({ ETag: etag, 'Cache-Control': 'private, no-cache' });
      return;
    }
    entry.status = 200;
    json(ctx, 200, payload, { ETag: etag });
  };
}
