/**
 * The server the edge benchmark loads, run in its own process so autocannon and the server do
 * not share an event loop. One Hono app on `@hono/node-server` holds: `/bare`, a bare route
 * answering the exact bytes of a cached chart payload; `/edge`, the edge with its result cache;
 * `/nocache`, the same edge with caching off (every request reaches the backend); `/session`, the
 * edge with a session-bound id checked by `jwtSession`; `/embed`, the edge of a public embed on
 * another site (`allowedOrigins: ['*']`, asked with an `Origin`); `/redis`, the edge with its state
 * (revocations, registry, rate limits, results) in the Redis at `BENCH_REDIS_URL`. The backend is
 * a small HTTP service speaking the data endpoint's wire format with a fixed 90-bucket envelope.
 * Started once more with `BENCH_ROLE=replica`, it is a second replica sharing that Redis and the
 * signing key in `BENCH_SIGNING_KEY`, for the revocation propagation measure.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEdge, generateSigningKey, httpBackend, jwtSession } from '@analytics-chart/edge';
import { serveEdge } from '@analytics-chart/edge/node';
import { redisStore } from '@analytics-chart/edge/redis';
import { Hono } from 'hono';
import { sign } from 'hono/jwt';

const API_KEY = 'bench-workspace-key-0123456789';
const SESSION_SECRET = 'bench-session-secret-0123456789abcdef';
const DAY = 86_400;

// The backend: 90 daily buckets, about 2 KB once trimmed.
const start = Date.UTC(2024, 0, 1) / 1000;
const envelope = JSON.stringify({
  result: Array.from({ length: 90 }, (_, i) => ({
    timestamp: new Date((start + i * DAY) * 1000).toISOString().slice(0, 10),
    Count: (i * 7919) % 1000,
  })),
  metadata: { granularity: 'Day', combined: 29_970 },
});
const backendServer = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { api_key?: string };
    res.writeHead(body.api_key === API_KEY ? 200 : 400, { 'content-type': 'application/json' });
    res.end(body.api_key === API_KEY ? envelope : '{"error":"Invalid API KEY"}');
  });
});
backendServer.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => backendServer.listen(0, '127.0.0.1', resolve));
const backendUrl = `http://127.0.0.1:${(backendServer.address() as AddressInfo).port}`;

const query = {
  title: 'Events per day',
  query: {
    graph_type: 'Single Line',
    IANA_time_zone: 'UTC',
    start: '90 days ago',
    end: 'now',
    granularity: 'Day',
    filters: [['tenant', '=', { $param: 'tenant' }]],
  },
  params: { tenant: { from: 'session' as const } },
};
const huge = { perSecond: 1e9, burst: 1e9 };
const base = {
  signingKeys: process.env.BENCH_SIGNING_KEY ?? [generateSigningKey()],
  backend: httpBackend({ baseUrl: backendUrl, apiKey: API_KEY }),
  queries: { daily: query },
  authorize: jwtSession({ secret: SESSION_SECRET }),
  // The limits stay on (their cost is part of the hot path), just too high to trigger.
  rateLimit: { perId: huge, perIp: huge },
  log: () => {},
};
const cached = createEdge(base);
const uncached = createEdge({ ...base, cache: { ttl: 0, staleIfError: 0 } });
const embed = createEdge({ ...base, allowedOrigins: ['*'] });
const redisUrl = process.env.BENCH_REDIS_URL;
if (!redisUrl) throw new Error('BENCH_REDIS_URL is not set');
const shared = createEdge({ ...base, store: await redisStore({ url: redisUrl, log: () => {} }) });

const exp = Math.floor(Date.now() / 1000) + 3600;
const publicId = (
  await cached.signQueryId({ query: 'daily', params: { tenant: 'acme' }, public: true })
).id;
const nocacheId = (
  await uncached.signQueryId({ query: 'daily', params: { tenant: 'acme' }, public: true })
).id;
const embedId = (
  await embed.signQueryId({ query: 'daily', params: { tenant: 'acme' }, public: true })
).id;
const redisId = (
  await shared.signQueryId({ query: 'daily', params: { tenant: 'acme' }, public: true })
).id;
const sessionId = (
  await cached.signQueryId({ query: 'daily', params: { tenant: 'acme' }, subject: 'alice' })
).id;
const cookie = `session=${await sign({ sub: 'alice', tenant: 'acme', exp }, SESSION_SECRET)}`;

let bare = new Uint8Array();
const app = new Hono();
app.get('/bare', (c) => c.body(bare, 200, { 'content-type': 'application/json; charset=utf-8' }));
app.route('/edge', cached.app);
app.route('/nocache', uncached.app);
app.route('/session', cached.app);
app.route('/embed', embed.app);
app.route('/redis', shared.app);
const served = await serveEdge(app, { port: 0 });

// The bare route answers exactly the bytes of the cached payload.
const first = await fetch(`${served.url}/edge/api/data`, {
  headers: { authorization: `Bearer ${publicId}` },
});
bare = new Uint8Array(await first.arrayBuffer());
// The embed's answers must really carry CORS, or its row would measure something else.
const embedded = await fetch(`${served.url}/embed/api/data`, {
  headers: { authorization: `Bearer ${embedId}`, origin: 'https://blog.example' },
});
await embedded.arrayBuffer();
if (embedded.status !== 200 || embedded.headers.get('access-control-allow-origin') !== '*') {
  throw new Error(`the embed route answered ${embedded.status} without CORS`);
}

// The direct call the cache-miss comparison makes: the body the edge sends, with the key.
const backendBody = JSON.stringify({
  ...query.query,
  filters: [['tenant', '=', 'acme']],
  api_key: API_KEY,
});

process.send?.({
  url: served.url,
  backendUrl,
  publicId,
  nocacheId,
  embedId,
  sessionId,
  redisId,
  cookie,
  backendBody,
  bytes: bare.length,
});
process.on('message', async (message) => {
  // CPU time of this process: the robust measure on a machine that other work shares.
  if (message === 'cpu') process.send?.({ cpu: process.cpuUsage() });
  // The propagation measure: a fresh public id of the Redis edge, then its revocation.
  if (message === 'mint') {
    const minted = await shared.signQueryId({
      query: 'daily',
      params: { tenant: 'acme' },
      public: true,
    });
    process.send?.({ minted: minted.id, jti: minted.jti });
  }
  if (typeof message === 'object' && message !== null && 'revoke' in message) {
    await shared.revoke(String(message.revoke));
    process.send?.({ revoked: true });
  }
  if (message === 'stop') {
    await served.close();
    await shared.store.close();
    backendServer.closeAllConnections();
    backendServer.close();
    process.exit(0);
  }
});
