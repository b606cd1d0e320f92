import { engineBackend, type QueryableEngine } from '../../backend/engine-backend.ts';
import { type EdgeEnv, edgeConfigFromEnv } from '../../config/config-from-env.ts';
import type { EdgeConfig } from '../../config/edge-config.ts';
import { bundleFile } from './bundle-file.ts';

/** An edge config on Node, with what must be closed when the host stops. */
export interface NodeEdgeConfig {
  config: EdgeConfig;
  /** `http` to `ANALYTICS_BASE_URL`, `in-process` engine, or the backend given in code. */
  backend: 'http' | 'in-process' | 'given';
  /** Closes the in-process engine, if one was opened. */
  close(): Promise<void>;
}

/**
 * `edgeConfigFromEnv` for Node hosts, with two additions: the bundle defaults to the element's
 * build (`bundleFile()`), and when neither a backend nor
 * `ANALYTICS_BASE_URL` is given, it opens the engine in this process (its data under
 * `ANALYTICS_DATA_DIR`, default `.data/engine`, one workspace keyed by `ANALYTICS_API_KEY`), so a
 * self-hosted setup needs no second server. The engine package is imported only then, so hosts
 * using the hosted service never load DuckDB.
 */
export async function nodeEdgeConfig(
  given: Partial<EdgeConfig> & Pick<EdgeConfig, 'queries'>,
  env: EdgeEnv = process.env,
): Promise<NodeEdgeConfig> {
  // The element's bundle from this monorepo's build unless one is given (null while unbuilt).
  const overrides = { bundle: bundleFile(), ...given };
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
