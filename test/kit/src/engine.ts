/**
 * The engine as the harnesses start it: the real engine (DuckDB) on a temporary data directory
 * with the fixture events ingested, optionally served over HTTP on a loopback port.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, type Engine, serveEngine } from '@analytics-chart/engine';
import type { FixtureEvent } from './fixture-events.ts';

/** A running engine holding the events. */
export interface EngineWithEvents {
  engine: Engine;
  apiKey: string;
  /** Its HTTP API's base URL, when served. */
  url: string | undefined;
  close(): Promise<void>;
}

/** How {@link startEngine} starts it. */
export interface StartEngineOptions {
  apiKey: string;
  events: readonly FixtureEvent[];
  /**
   * Serve it on 127.0.0.1 and ingest through `/api/bulk-log`, as a client of the hosted service
   * sends events; otherwise the events go in through the engine's own `bulkLog`.
   */
  serve?: boolean;
}

/** Starts the engine with one workspace (`default`, keyed by `apiKey`) holding `events`. */
export async function startEngine(options: StartEngineOptions): Promise<EngineWithEvents> {
  const { apiKey } = options;
  const dataDir = await mkdtemp(join(tmpdir(), 'test-kit-engine-'));
  const engine = await createEngine({ dataDir, workspaces: { default: apiKey } });
  const served = options.serve ? await serveEngine({ engine, port: 0, host: '127.0.0.1' }) : null;
  const close = async () => {
    await served?.close();
    await engine.close();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    // bulk-log takes one timestamp per request: one request per distinct time.
    const byTime = new Map<number, string[]>();
    for (const e of options.events) {
      byTime.set(e.timestamp, [...(byTime.get(e.timestamp) ?? []), JSON.stringify(e.json)]);
    }
    for (const [timestamp, jsons] of byTime) {
      const body = { api_key: apiKey, timestamp, jsons };
      const status = served
        ? (
            await fetch(`${served.url}/api/bulk-log`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(body),
            })
          ).status
        : (await engine.bulkLog(body)).status;
      if (status !== 200) throw new Error(`ingest failed with status ${status}`);
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { engine, apiKey, url: served?.url, close };
}
