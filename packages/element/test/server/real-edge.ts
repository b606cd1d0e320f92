/**
 * A real edge for the element's cross-origin tests, run as a child process of the test runner
 * (`node --import tsx`). The edge is the real one (`@analytics-chart/edge`: Hono on
 * @hono/node-server, signed ids, sessions, CORS, renewal, the bundle route). Behind it, a small
 * stand-in of the analytics service answers `POST /api/visualize/data` in the service's envelope
 * format, because the in-process engine was not yet usable when these tests were written.
 *
 * Prints one JSON line `{edgeUrl, controlUrl}` and serves, on the control URL (CORS `*`):
 * `GET /ids` → fresh ids: `publicDaily` (public), `session` (bound to subject `alice`, 10 min),
 * `expiring` (bound to `alice`, 1 s lifetime: expired when used a moment later).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import {
  bundleFile,
  createEdge,
  generateSigningKey,
  httpBackend,
  serveEdge,
} from '@analytics-chart/edge/node';

const pageOrigin = process.argv[2] ?? 'http://localhost:8000';
const apiKey = `element-test-${crypto.randomUUID()}`;

/** The daily counts the stand-in service answers; the test expects exactly these. */
export const DAILY = [
  ['2024-03-01', 3],
  ['2024-03-02', 1],
  ['2024-03-03', 4],
  ['2024-03-04', 1],
  ['2024-03-05', 5],
] as const;

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

const service = createServer(async (req, res) => {
  if (req.method !== 'POST' || req.url !== '/api/visualize/data') {
    send(res, 404, { error: 'Not found' });
    return;
  }
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(await readBody(req));
  } catch {
    send(res, 400, { error: 'Body is not JSON' });
    return;
  }
  if (body.api_key !== apiKey) {
    send(res, 400, { error: 'Invalid API KEY' });
    return;
  }
  if (body.graph_type !== 'Single Line') {
    send(res, 400, { error: 'Unsupported graph type in this stand-in' });
    return;
  }
  send(res, 200, {
    result: DAILY.map(([timestamp, Count]) => ({ timestamp, Count })),
    metadata: { granularity: 'Day', combined: DAILY.reduce((s, [, n]) => s + n, 0) },
  });
});
await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
const serviceUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;

const daily = {
  title: 'Daily events',
  query: {
    graph_type: 'Single Line',
    IANA_time_zone: 'UTC',
    start: '7 days ago',
    end: 'now',
    granularity: 'Day',
  },
};

const edge = createEdge({
  signingKeys: [generateSigningKey()],
  backend: httpBackend({ baseUrl: serviceUrl, apiKey }),
  queries: { daily },
  // The test page's session: a cookie naming the subject (a real host would verify it).
  authorize: (c) => {
    const match = /(?:^|;\s*)element_session=([a-z]+)/.exec(c.req.header('cookie') ?? '');
    return match?.[1] ? { subject: match[1] } : null;
  },
  allowedOrigins: [pageOrigin, '*'],
  bundle: bundleFile(fileURLToPath(new URL('../../dist/analytics-chart.js', import.meta.url))),
  rateLimit: { perId: false, perIp: false },
  log: () => {},
});
const served = await serveEdge(edge, { port: 0, basePath: '/analytics' });

const control = createServer(async (req, res) => {
  const cors = { 'Access-Control-Allow-Origin': '*' };
  if (req.url !== '/ids') {
    send(res, 404, { error: 'Not found' }, cors);
    return;
  }
  const [publicDaily, session, expiring] = await Promise.all([
    edge.signQueryId({ query: 'daily', public: true }),
    edge.signQueryId({ query: 'daily', subject: 'alice', ttl: '10m' }),
    edge.signQueryId({ query: 'daily', subject: 'alice', ttl: 1 }),
  ]);
  send(
    res,
    200,
    { publicDaily: publicDaily.id, session: session.id, expiring: expiring.id, daily: DAILY },
    cors,
  );
});
await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
const controlUrl = `http://127.0.0.1:${(control.address() as AddressInfo).port}`;

process.stdout.write(`${JSON.stringify({ edgeUrl: served.url, controlUrl })}\n`);

const stop = async () => {
  await served.close();
  service.close();
  control.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// The runner closes our stdin when it exits, even if it could not signal us.
process.stdin.on('end', stop);
process.stdin.resume();
