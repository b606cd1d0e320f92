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
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  bundleFile,
  createEdge,
  engineBackend,
  generateSigningKey,
  serveEdge,
} from '@analytics-chart/edge/node';
import { createEngine } from '@analytics-chart/engine';

const pageOrigin = process.argv[2] ?? 'http://127.0.0.1:8000';
const apiKey = `element-test-${crypto.randomUUID()}`;
const DAY = 86_400;

function send(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

// Events 1 to 5 days back, a few hours before the current clock time, never near the window's
// edges (7 days ago … now): day d gets d + 1 events.
const now = Math.floor(Date.now() / 1000);
const events: { timestamp: number; json: Record<string, unknown> }[] = [];
for (let d = 1; d <= 5; d++) {
  for (let i = 0; i <= d; i++) {
    events.push({ timestamp: now - d * DAY - 3 * 3600 - i * 60, json: { event: 'view', i } });
  }
}
const counts: Record<string, number> = {};
for (const e of events) {
  const day = new Date(e.timestamp * 1000).toISOString().slice(0, 10);
  counts[day] = (counts[day] ?? 0) + 1;
}

const dataDir = mkdtempSync(join(tmpdir(), 'element-edge-'));
const engine = await createEngine({ dataDir, workspaces: { default: apiKey } });
for (const e of events) {
  const answer = await engine.log({ api_key: apiKey, json: e.json, timestamp: e.timestamp });
  if (answer.status !== 200) throw new Error(`ingest failed: ${JSON.stringify(answer.body)}`);
}

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
  backend: engineBackend(engine, { apiKey }),
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
  await engine.close();
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// The runner closes our stdin when it exits, even if it could not signal us.
process.stdin.on('end', stop);
process.stdin.resume();
