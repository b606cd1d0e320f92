import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, type Engine, type EngineOptions, serveEngine } from '../../src/index.ts';
import { clusterCollection } from '../../src/storage/duckdb/cluster-rows.ts';
import { WorkspaceDb } from '../../src/storage/duckdb/workspace-db.ts';
import { CLUSTERED, driverOptions, ROLLUP_SPECS, ROLLUPS } from './driver.ts';

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
  /**
   * Stops the engine, runs `between` while its data directory is free, and starts it again
   * with the same options (on a new port: `url` and `engine` change).
   */
  restart(between: (dataDir: string) => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

export const API_KEY = 'test-key-0123456789';

/**
 * Starts a test server on this run's driver (see `driver.ts`; options naming `clickhouse` or a
 * `dataDir` choose for themselves); `now` pins the engine's clock (Unix seconds).
 */
export async function startServer(options: Partial<EngineOptions> = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'engine-test-'));
  const config: EngineOptions = {
    workspaces: { default: API_KEY, other: 'other-key-9876543210' },
    memoryLimit: '512MB',
    logError: () => undefined,
    ...(options.dataDir
      ? ROLLUPS
        ? { rollups: ROLLUP_SPECS, rollupReads: 'always' as const }
        : {}
      : driverOptions()),
    ...options,
    dataDir,
  };
  let engine = await createEngine(config);
  let served = await serveEngine({ engine, port: 0, host: '127.0.0.1' });
  return {
    get engine() {
      return engine;
    },
    get url() {
      return served.url;
    },
    dataDir,
    async restart(between) {
      await served.close();
      await engine.close();
      await between(dataDir);
      engine = await createEngine(config);
      served = await serveEngine({ engine, port: 0, host: '127.0.0.1' });
    },
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

/**
 * The top-level keys the `duckdb-clustered` project orders a collection's rows by, the first the
 * collection has: keys holding numbers and words and missing from many events first, so that
 * zone maps over mixed and missing values are what the suites read.
 */
const CLUSTER_KEYS = ['code', 'price', 'event', 'country', 'odd', 'k', 'v', 'value', 'name'];

/**
 * Reorders a collection of the server's `default` workspace as `engine load` does (in the
 * `duckdb-clustered` project only), by the first of {@link CLUSTER_KEYS} it holds, else by the
 * key the engine would choose.
 */
async function clusterForTests(server: TestServer, collection: string, apiKey: string) {
  if (!CLUSTERED || apiKey !== API_KEY) return;
  await server.restart(async (dataDir) => {
    const db = await WorkspaceDb.open(join(dataDir, 'default.duckdb'));
    try {
      const entry = db.catalog.get(collection);
      const field = CLUSTER_KEYS.find((k) =>
        entry?.keys.some((key) => key.path.length === 1 && key.path[0] === k && key.hasString),
      );
      await clusterCollection(db, collection, field === undefined ? {} : { field });
    } finally {
      await db.close();
    }
  });
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
    // Many requests in flight, as many clients send them: the engine's group commit writes
    // those that arrive during one insert in the next, so a wave costs a few inserts.
    if (requests.length >= 256) await Promise.all(requests.splice(0));
  }
  await Promise.all(requests);
  await clusterForTests(server, collection, apiKey);
}
