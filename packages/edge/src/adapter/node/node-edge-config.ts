import { engineBackend, type QueryableEngine } from '../../backend/engine-backend.ts';
import { type EdgeEnv, edgeConfigFromEnv } from '../../config/config-from-env.ts';
import type { EdgeConfig } from '../../config/edge-config.ts';
import { consoleLogSink } from '../../log/logger.ts';
import { bundleFile, findElementBundle } from './bundle-file.ts';

/** An edge config on Node, with what must be closed when the host stops. */
export interface NodeEdgeConfig {
  config: EdgeConfig;
  /** `http` to `ANALYTICS_BASE_URL`, `in-process` engine, or the backend given in code. */
  backend: 'http' | 'in-process' | 'given';
  /** Closes the in-process engine, if one was opened. */
  close(): Promise<void>;
}

/**
 * `edgeConfigFromEnv` for Node hosts, with two additions: the bundle defaults to the installed
 * element's (`bundleFile()`, with a warning in the log when there is none), and when neither a backend nor
 * `ANALYTICS_BASE_URL` is given, it opens the engine in this process (its data under
 * `ANALYTICS_DATA_DIR`, default `.data/engine`, one workspace keyed by `ANALYTICS_API_KEY`), so a
 * self-hosted setup needs no second server. The engine package is imported only then, so hosts
 * using the hosted service never load DuckDB.
 */
export async function nodeEdgeConfig(
  given: Partial<EdgeConfig> & Pick<EdgeConfig, 'queries'>,
  env: EdgeEnv = process.env,
): Promise<NodeEdgeConfig> {
  // The installed element's bundle unless one is given; said at start-up when there is none,
  // since the edge would otherwise answer 404 for the script with no hint why.
  const found = given.bundle === undefined ? findElementBundle() : null;
  if (given.bundle === undefined && !found) {
    (given.log ?? consoleLogSink)({
      level: 'warn',
      event: 'bundle.missing',
      message:
        'no element bundle found: install @analytics-chart/element next to the edge (or pass bundle); analytics-chart.js answers 404 until then',
    });
  }
  const overrides = { bundle: bundleFile(found ?? undefined), ...given };
  const baseUrl = typeof env.ANALYTICS_BASE_URL === 'string' ? env.ANALYTICS_BASE_URL.trim() : '';
  if (overrides.backend || baseUrl) {
    return {
      config: edgeConfigFromEnv(env, overrides),
      backend: overrides.backend ? 'given' : 'http',
      close: async () => {},
    };
  }
  const apiKey = env.ANALYTICS_API_KEY;
  if (typeof apiKey !== 'string' || apiKey.trim() === '') {
    throw new Error(
      'analytics edge: ANALYTICS_API_KEY is not set (the workspace key, from a secret store)',
    );
  }
  // A variable specifier keeps bundlers from pulling the engine (and DuckDB) into edge builds.
  const enginePackage = '@analytics-chart/engine';
  const { createEngine } = (await import(enginePackage)) as {
    createEngine(options: {
      dataDir: string;
      workspaces: Record<string, string>;
    }): Promise<QueryableEngine & { close(): Promise<void> }>;
  };
  const dataDir =
    typeof env.ANALYTICS_DATA_DIR === 'string' && env.ANALYTICS_DATA_DIR
      ? env.ANALYTICS_DATA_DIR
      : '.data/engine';
  const engine = await createEngine({ dataDir, workspaces: { default: apiKey } });
  const backend = engineBackend(engine, { apiKey });
  try {
    return {
      config: edgeConfigFromEnv(env, { ...overrides, backend }),
      backend: 'in-process',
      close: () => engine.close(),
    };
  } catch (error) {
    await engine.close();
    throw error;
  }
}
