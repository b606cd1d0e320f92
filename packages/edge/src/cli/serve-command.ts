import { nodeEdgeConfig } from '../adapter/node/node-edge-config.ts';
import { serveEdge } from '../adapter/node/serve-edge.ts';
import { createEdge } from '../create-edge.ts';
import { forwardSession } from '../session/forward-session.ts';
import type { Session } from '../session/session.ts';
import type { EdgeStore } from '../store/edge-store.ts';
import { loadEdgeModuleConfig } from './load-config.ts';

/** Options of `analytics-edge serve`, as parsed from the command line. */
export interface ServeOptions {
  config?: string | undefined;
  port?: string | undefined;
  host?: string | undefined;
  basePath?: string | undefined;
}

function portNumber(text: string | undefined): number {
  if (text === undefined) return 8787;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) throw new Error(`--port must be 0-65535, not '${text}'`);
  return port;
}

/**
 * The Redis store when `EDGE_REDIS_URL` is set (prefix `EDGE_REDIS_PREFIX`), else undefined: the
 * edge then keeps its state in this process and says so. The client is loaded only then.
 */
export async function storeFrom(
  env: Record<string, string | undefined>,
): Promise<EdgeStore | undefined> {
  const url = env.EDGE_REDIS_URL?.trim();
  if (!url) return undefined;
  let module: typeof import('../store/redis-store.ts');
  try {
    module = await import('../store/redis-store.ts');
  } catch (error) {
    throw new Error(
      `EDGE_REDIS_URL is set but the Redis client could not be loaded (install the \`redis\` package next to the edge): ${(error as Error).message}`,
    );
  }
  const prefix = env.EDGE_REDIS_PREFIX?.trim();
  try {
    return await module.redisStore({ url, ...(prefix ? { prefix } : {}) });
  } catch (error) {
    throw new Error(`cannot reach Redis at EDGE_REDIS_URL: ${(error as Error).message}`);
  }
}

/**
 * `analytics-edge serve`: the edge as a standalone service for hosts that are not written in
 * JavaScript. The registry and settings come from the config file, secrets and the service URL
 * from the environment, queries run over HTTP, and signed-in viewers are recognised by
 * forwarding their cookie to the host's session endpoint (`session.url`). Stops on SIGINT and
 * SIGTERM.
 */
export async function serveCommand(
  options: ServeOptions,
  cwd: string,
  env: Record<string, string | undefined>,
): Promise<void> {
  const port = portNumber(options.port);
  const basePath = (options.basePath ?? '').replace(/\/+$/, '');
  if (basePath && !basePath.startsWith('/')) throw new Error('--base-path must start with /');
  const { path, config } = await loadEdgeModuleConfig(cwd, options.config, env);
  const baseUrl = env.ANALYTICS_BASE_URL?.trim();
  if (!baseUrl && !config.backend) {
    throw new Error(
      'ANALYTICS_BASE_URL is not set: serve runs queries over HTTP against the analytics service (or `analytics-engine serve`)',
    );
  }
  const { session: configured, publicUrl: filePublicUrl, admins, ...settings } = config;
  // As for `analytics-edge sign`: EDGE_PUBLIC_URL first, then the file's publicUrl.
  const publicUrl = env.EDGE_PUBLIC_URL?.trim() || filePublicUrl;
  const store = await storeFrom(env);
  const subjects = new Set(admins?.subjects ?? []);
  const admin =
    settings.admin ?? (subjects.size ? (s: Session) => subjects.has(s.subject) : undefined);
  // The session endpoint usually differs per environment: EDGE_SESSION_URL overrides the file.
  const sessionUrl = env.EDGE_SESSION_URL?.trim() || configured?.url;
  const session = sessionUrl ? { ...configured, url: sessionUrl } : undefined;
  const authorize = settings.authorize ?? (session ? forwardSession(session) : undefined);
  const { config: edgeConfig } = await nodeEdgeConfig(
    {
      ...settings,
      ...(publicUrl ? { publicUrl } : {}),
      ...(authorize ? { authorize } : {}),
      ...(store ? { store } : {}),
      ...(admin ? { admin } : {}),
    },
    env,
  );
  const edge = createEdge(edgeConfig);
  const served = await serveEdge(edge, {
    port,
    hostname: options.host ?? '127.0.0.1',
    basePath,
  });
  const sessions = session ? `sessions from ${session.url}` : 'no session check: public ids only';
  process.stdout.write(
    `analytics-edge listening on ${served.url} (${Object.keys(config.queries).length} queries from ${path}; backend ${baseUrl ?? 'from the config'}; ${sessions})\n`,
  );
  const stop = () => {
    served
      .close()
      .then(() => store?.close())
      .then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
