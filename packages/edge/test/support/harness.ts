/**
 * Starts the edge under test on a real socket, on Node (`@hono/node-server`) or under workerd
 * (the Workers adapter bundled with esbuild, run by miniflare), with the same environment, and
 * captures its log lines.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { serveEdge } from '../../src/adapter/node/serve-edge.ts';
import { engineBackend, type QueryableEngine } from '../../src/backend/engine-backend.ts';
import { type EdgeEnv, edgeConfigFromEnv } from '../../src/config/config-from-env.ts';
import { createEdge, type Edge } from '../../src/create-edge.ts';
import { testEdgeOverrides } from './test-config.ts';

/** A running edge: its base URL (the mount path included), its captured log, a way to stop it. */
export interface EdgeUnderTest {
  runtime: 'node' | 'workerd';
  url: string;
  logs: string[];
  /** The Edge object, on Node only (revocation and key rotation at run time). */
  edge?: Edge;
  close(): Promise<void>;
}

/**
 * The edge on Node, mounted at `/analytics`. With an engine (tap), the backend is the in-process
 * `engineBackend` and `ANALYTICS_BASE_URL` is not used.
 */
export async function startNodeEdge(
  env: EdgeEnv,
  engine?: QueryableEngine,
): Promise<EdgeUnderTest> {
  const logs: string[] = [];
  const overrides = testEdgeOverrides(env);
  if (engine) {
    overrides.backend = engineBackend(engine, {
      apiKey: String(env.ANALYTICS_API_KEY),
      timeoutMs: 800,
    });
  }
  const edge = createEdge({
    ...edgeConfigFromEnv(env, overrides),
    log: (entry) => logs.push(JSON.stringify(entry)),
  });
  const served = await serveEdge(edge, { port: 0, basePath: '/analytics' });
  return { runtime: 'node', url: served.url, logs, edge, close: served.close };
}

const ENTRY = fileURLToPath(new URL('./worker-entry.ts', import.meta.url));

/** `worker-entry.ts` (the Workers adapter with the suite's config) bundled as one module worker. */
export async function bundleTestWorker(): Promise<string> {
  const built = await build({
    entryPoints: [ENTRY],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    mainFields: ['module', 'main'],
    conditions: ['worker', 'browser'],
    write: false,
    logLevel: 'silent',
  });
  return built.outputFiles[0]?.text ?? '';
}

/**
 * A miniflare `handleRuntimeStdio` that appends workerd's output to `logs` a whole line at a time
 * (a chunk may end mid-line), skipping blank lines.
 */
export function captureLines(logs: string[]) {
  const capture = (stream: NodeJS.ReadableStream) => {
    let pending = '';
    stream.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) logs.push(line);
    });
  };
  return (stdout: NodeJS.ReadableStream, stderr: NodeJS.ReadableStream) => {
    capture(stdout);
    capture(stderr);
  };
}

/** The edge under workerd: the Workers adapter bundled as a module worker, bindings from `env`. */
export async function startWorkerdEdge(env: Record<string, string>): Promise<EdgeUnderTest> {
  const script = await bundleTestWorker();
  const logs: string[] = [];
  const mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: '2025-01-01',
    bindings: env,
    handleRuntimeStdio: captureLines(logs),
  });
  const url = await mf.ready;
  return {
    runtime: 'workerd',
    url: `${url.origin}/analytics`,
    logs,
    close: async () => {
      await mf.dispose();
    },
  };
}
