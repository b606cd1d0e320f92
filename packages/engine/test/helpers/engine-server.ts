import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, type Engine, type EngineOptions, serveEngine } from '../../src/index.ts';
import { driverOptions } from './driver.ts';

/** A status with the parsed JSON body (untyped: tests read answers of every shape) and its text. */
// biome-ignore lint/suspicious/noExplicitAny: tests read answers of every shape
export type Answer = { status: number; body: any; text: string };

/** A real engine in a temporary data directory, served over real HTTP on 127.0.0.1:0. */
export interface TestServer {
  engine: Engine;
  url: string;
  dataDir: string;
  /** POSTs a JSON body (or raw text) and returns the status and parsed body. */
  post(path: string, body: unknown, init?: RequestInit): Promise<Answer>;
  close(): Promise<void>;
}

export const API_KEY = 'test-key-0123456789';

/**
 * Starts a test server on this run's driver (see `driver.ts`; options naming `clickhouse` or a
 * `dataDir` choose for themselves); `now` pins the engine's clock (Unix seconds).
 */
export async function startServer(options: Partial<EngineOptions> = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'engine-test-'));
  const engine = await createEngine({
    workspaces: { default: API_KEY, other: 'other-key-9876543210' },
    memoryLimit: '512MB',
    logError: () => undefined,
    ...(options.dataDir ? {} : driverOptions()),
    ...options,
    dataDir,
  });
  const served = await serveEngine({ engine, port: 0, host: '127.0.0.1' });
  return {
    engine,
    url: served.url,
    dataDir,
    async post(path, body, init = {}) {
      const response = await fetch(`${served.url}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(init.headers ?? {}) },
        body: typeof body === 'string' ? body : JSON.stringify(body),
        ...Object.fromEntries(Object.entries(init).filter(([k]) => k !== 'headers')),
      });
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      return { status: response.status, body: parsed, text };
    },
    async close() {
      await served.close();
      await engine.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Ingests events through `/api/bulk-log`, one request per distinct timestamp group. */
export async function ingest(
  server: TestServer,
  events: Array<{ timestamp: number; json: Record<string, unknown> | string }>,
  collection = 'all_events',
  apiKey = API_KEY,
): Promise<void> {
  // bulk-log carries one timestamp per request; group consecutive events that share one.
  let i = 0;
  const requests: Promise<unknown>[] = [];
  while (i < events.length) {
    const timestamp = (events[i] as { timestamp: number }).timestamp;
    const jsons: string[] = [];
    while (i < events.length && (events[i] as { timestamp: number }).timestamp === timestamp) {
      const json = (events[i] as { json: unknown }).json;
      jsons.push(typeof json === 'string' ? json : JSON.stringify(json));
      i++;
    }
    requests.push(
      server.post('/api/bulk-log', { api_key: apiKey, collection, timestamp, jsons }).then((r) => {
        if (r.status !== 200) throw new Error(`bulk-log failed: ${r.status} ${r.text}`);
      }),
    );
    if (requests.length >= 32) await Promise.all(requests.splice(0));
  }
  await Promise.all(requests);
}
