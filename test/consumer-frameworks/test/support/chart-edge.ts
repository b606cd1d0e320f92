import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createEdge,
  engineBackend,
  generateSigningKey,
  serveEdge,
} from '@analytics-chart/edge/node';
import { createEngine } from '@analytics-chart/engine';

const DAY = 86_400;

/** A running engine and edge with events ingested, and a public id for their daily chart. */
export interface ChartEdge {
  /** The edge's base URL, for the element's `endpoint`. */
  url: string;
  queryId: string;
  /** How many events were ingested, all inside the chart's window: the drawn values' sum. */
  eventCount: number;
  close(): Promise<void>;
}

/**
 * The workspace's engine (DuckDB in a temporary directory) and edge on Node, on a free port,
 * answering the given page origins (CORS). Events fall 1 to 5 days back, a few hours before the
 * current clock time, so every one is inside "7 days ago … now".
 */
export async function startChartEdge(allowedOrigins: string[]): Promise<ChartEdge> {
  const apiKey = `frameworks-${crypto.randomUUID()}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'frameworks-engine-'));
  const engine = await createEngine({ dataDir, workspaces: { default: apiKey } });
  const now = Math.floor(Date.now() / 1000);
  let eventCount = 0;
  for (let d = 1; d <= 5; d++) {
    for (let i = 0; i <= d; i++) {
      const timestamp = now - d * DAY - 3 * 3600 - i * 60;
      const answer = await engine.log({ api_key: apiKey, json: { event: 'view' }, timestamp });
      if (answer.status !== 200) throw new Error(`ingest failed: ${JSON.stringify(answer.body)}`);
      eventCount++;
    }
  }
  const edge = createEdge({
    signingKeys: [generateSigningKey()],
    backend: engineBackend(engine, { apiKey }),
    queries: {
      daily: {
        title: 'Daily views',
        query: {
          graph_type: 'Single Line',
          IANA_time_zone: 'UTC',
          start: '7 days ago',
          end: 'now',
          granularity: 'Day',
        },
      },
    },
    allowedOrigins,
    rateLimit: { perId: false, perIp: false },
    log: () => {},
  });
  const served = await serveEdge(edge, { port: 0, basePath: '/analytics' });
  const { id } = await edge.signQueryId({ query: 'daily', public: true });
  return {
    url: served.url,
    queryId: id,
    eventCount,
    async close() {
      await served.close();
      await engine.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
