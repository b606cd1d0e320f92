/**
 * Starts the edge under test on a real socket, on Node (`@hono/node-server`), under workerd
 * (the Workers adapter bundled with esbuild, run by miniflare), or under Bun or Deno (their own
 * servers, the runtimes from npm), with the same environment, and captures its log lines.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { captureLines } from '@analytics-chart/test-kit/workerd';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { serveEdge } from '../../src/adapter/node/serve-edge.ts';
import { engineBackend, type QueryableEngine } from '../../src/backend/engine-backend.ts';
import { type EdgeEnv, edgeConfigFromEnv } from '../../src/config/config-from-env.ts';
import { createEdge, type Edge } from '../../src/create-edge.ts';
import { testEdgeOverrides } from './test-config.ts';

/** Where the suite runs the edge. */
export type Runtime = 'node' | 'workerd' | 'bun' | 'deno';

/** A running edge: its base URL (the mount path included), its captured log, a way to stop it. */
export interface EdgeUnderTest {
  runtime: Runtime;
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

const RUNTIME_ENTRY = fileURLToPath(new URL('./runtime-entry.ts', import.meta.url));
const PACKAGE_DIR = fileURLToPath(new URL('../..', import.meta.url));

/**
 * A runtime's executable from the per-platform package its npm package depends on (pnpm installs
 * the one for this machine). Called there directly: nothing builds at install here, so the npm
 * packages' own postinstall, which would copy it under their `bin`, never runs.
 */
function platformBinary(pkg: string, platformPackages: string[], file: string): string {
  const fromPkg = createRequire(createRequire(import.meta.url).resolve(`${pkg}/package.json`));
  for (const name of platformPackages) {
    try {
      return join(dirname(fromPkg.resolve(`${name}/package.json`)), file);
    } catch {
      // Not this machine's platform package: try the next.
    }
  }
  throw new Error(`no ${pkg} binary for ${process.platform}-${process.arch}: run pnpm install`);
}

const PLATFORM = `${process.platform}-${process.arch}`;
/** Bun names its ARM packages `aarch64`. */
const BUN_PLATFORM = PLATFORM.replace(/-arm64$/, '-aarch64');

/**
 * How each runtime runs `runtime-entry.ts`, and for Deno only the permissions the edge needs
 * (its settings and loopback sockets: modules load without a read permission).
 */
const RUNTIME_COMMANDS: Record<'bun' | 'deno', () => string[]> = {
  bun: () => [
    platformBinary(
      'bun',
      [
        `@oven/bun-${BUN_PLATFORM}`,
        `@oven/bun-${BUN_PLATFORM}-baseline`,
        `@oven/bun-${BUN_PLATFORM}-musl`,
      ],
      'bin/bun',
    ),
    RUNTIME_ENTRY,
  ],
  deno: () => [
    platformBinary('deno', [`@deno/${PLATFORM}-glibc`, `@deno/${PLATFORM}`], 'deno'),
    'run',
    '--allow-env',
    '--allow-net=127.0.0.1',
    '--no-prompt',
    RUNTIME_ENTRY,
  ],
};

/** The edge under Bun or Deno, in a process of its own, configured from `env` alone. */
export async function startRuntimeEdge(
  runtime: 'bun' | 'deno',
  env: Record<string, string>,
): Promise<EdgeUnderTest> {
  const [command, ...args] = RUNTIME_COMMANDS[runtime]() as [string, ...string[]];
  const child = spawn(command, args, {
    cwd: PACKAGE_DIR,
    // Only what the edge is given, plus what the runtime itself needs to start.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  captureLines(logs)(child.stdout, child.stderr);
  const LISTENING = 'listening on ';
  const url = await new Promise<string>((resolve, reject) => {
    const onExit = (code: number | null) =>
      reject(new Error(`${runtime} exited with ${code} before listening: ${logs.join('\n')}`));
    // captureLines, registered first, has already put each whole line of the chunk in `logs`.
    const onData = () => {
      const at = logs.findIndex((line) => line.startsWith(LISTENING));
      if (at < 0) return;
      child.stdout.off('data', onData);
      child.off('exit', onExit);
      // The log keeps the edge's own lines only.
      resolve((logs.splice(at, 1)[0] as string).slice(LISTENING.length));
    };
    child.stdout.on('data', onData);
    child.once('exit', onExit);
  });
  return {
    runtime,
    url: `${url}/analytics`,
    logs,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
