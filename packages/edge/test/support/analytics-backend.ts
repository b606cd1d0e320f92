/**
 * The analytics service the suites query: the real engine (DuckDB) in a temporary data
 * directory, served over HTTP on loopback, with the fixture events ingested through its
 * `/api/bulk-log` endpoint as a client of the hosted service would send them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, type Engine, serveEngine } from '@analytics-chart/engine';
import { type FixtureEvent, fixtureEvents } from '@analytics-chart/test-kit/fixture-events';

export interface AnalyticsBackend {
  url: string;
  engine: Engine;
  events: FixtureEvent[];
  close(): Promise<void>;
}

export async function startAnalyticsBackend(apiKey: string): Promise<AnalyticsBackend> {
  const dataDir = mkdtempSync(join(tmpdir(), 'edge-engine-'));
  const engine = await createEngine({ dataDir, workspaces: { default: apiKey } });
  const served = await serveEngine({ engine, port: 0, host: '127.0.0.1' });
  const events = fixtureEvents(Math.floor(Date.now() / 1000));
  // bulk-log takes one timestamp per request: one request per distinct time.
  const byTime = new Map<number, FixtureEvent[]>();
  for (const event of events)
    byTime.set(event.timestamp, [...(byTime.get(event.timestamp) ?? []), event]);
  for (const [timestamp, group] of byTime) {
    const response = await fetch(`${served.url}/api/bulk-log`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        api_key: apiKey,
        timestamp,
        jsons: group.map((e) => JSON.stringify(e.json)),
      }),
    });
    if (!response.ok) throw new Error(`ingest failed: ${response.status} ${await response.text()}`);
  }
  return {
    url: served.url,
    engine,
    events,
    close: async () => {
      await served.close();
      await engine.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
