/**
 * A real edge for the element's cross-origin tests, run as a child process of the test runner
 * (`node --import tsx`): `@analytics-chart/edge` (Hono on @hono/node-server: signed ids, sessions,
 * CORS, renewal, the bundle route) in front of the real engine (`@analytics-chart/engine`, DuckDB
 * in a temporary directory) through `engineBackend`, with a few events ingested at start.
 *
 * Prints one JSON line `{edgeUrl, controlUrl}` and serves, on the control URL (CORS `*`):
 * `GET /ids` → fresh ids: `publicDaily` (public), `session` (bound to subject `alice`, 10 min),
 * `expiring` (bound to `alice`, 1 s lifetime: expired when used a moment later), and `counts`,
 * the expected count per UTC day computed here with a plain loop over the ingested events.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import {
  bundleFile,
  createEdge,
  engineBackend,
  generateSigningKey,
  serveEdge,
} from '@analytics-chart/edge/node';
import { startEngine } from '@analytics-chart/test-kit/engine';
import { countByUtcDay, recentViews } from '@analytics-chart/test-kit/fixture-events';
import { dailyEvents } from '@analytics-chart/test-kit/queries';

const pageOrigin = process.argv[2] ?? 'http://127.0.0.1:8000';
const apiKey = `element-test-${crypto.randomUUID()}`;

function send(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

const events = recentViews(Math.floor(Date.now() / 1000));
const counts = countByUtcDay(events);

const analytics = await startEngine({ apiKey, events });

const daily = dailyEvents({ title: 'Daily events' });

const edge = createEdge({
  signingKeys: [generateSigningKey()],
  backend: engineBackend(analytics.engine, { apiKey }),
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
    { publicDaily: publicDaily.id, session: session.id, expiring: expiring.id, counts },
    cors,
  );
});
await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
const controlUrl = `http://127.0.0.1:${(control.address() as AddressInfo).port}`;

process.stdout.write(`${JSON.stringify({ edgeUrl: served.url, controlUrl })}\n`);

const stop = async () => {
  await served.close();
  control.close();
  await analytics.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// The runner closes our stdin when it exits, even if it could not signal us.
process.stdin.on('end', stop);
process.stdin.resume();
