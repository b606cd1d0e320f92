import {
  createEdge,
  engineBackend,
  generateSigningKey,
  serveEdge,
} from '@analytics-chart/edge/node';
import { startEngine } from '@analytics-chart/test-kit/engine';
import { recentViews } from '@analytics-chart/test-kit/fixture-events';
import { dailyEvents } from '@analytics-chart/test-kit/queries';

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
  const events = recentViews(Math.floor(Date.now() / 1000));
  const analytics = await startEngine({ apiKey, events });
  const edge = createEdge({
    signingKeys: [generateSigningKey()],
    backend: engineBackend(analytics.engine, { apiKey }),
    queries: { daily: dailyEvents({ title: 'Daily views' }) },
    allowedOrigins,
    rateLimit: { perId: false, perIp: false },
    log: () => {},
  });
  const served = await serveEdge(edge, { port: 0, basePath: '/analytics' });
  const { id } = await edge.signQueryId({ query: 'daily', public: true });
  return {
    url: served.url,
    queryId: id,
    eventCount: events.length,
    async close() {
      await served.close();
      await analytics.close();
    },
  };
}
