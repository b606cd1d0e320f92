/**
 * The analytics service the suites query: the real engine (DuckDB) in a temporary data
 * directory, served over HTTP on loopback, with the test kit's fixture events ingested through
 * its `/api/bulk-log` endpoint as a client of the hosted service would send them.
 */
import type { Engine } from '@analytics-chart/engine';
import { startEngine } from '@analytics-chart/test-kit/engine';
import { type FixtureEvent, fixtureEvents } from '@analytics-chart/test-kit/fixture-events';

export interface AnalyticsBackend {
  url: string;
  engine: Engine;
  events: FixtureEvent[];
  close(): Promise<void>;
}

export async function startAnalyticsBackend(apiKey: string): Promise<AnalyticsBackend> {
  const events = fixtureEvents(Math.floor(Date.now() / 1000));
  const started = await startEngine({ apiKey, events, serve: true });
  return { url: started.url ?? '', engine: started.engine, events, close: started.close };
}
