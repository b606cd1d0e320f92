import { nodeEdgeConfig } from '../adapter/node/node-edge-config.ts';
import { serveEdge } from '../adapter/node/serve-edge.ts';
import type { Backend } from '../backend/backend.ts';
import { createEdge } from '../create-edge.ts';
import { checkDefinitions } from '../registry/check-definitions.ts';
import { compileRegistry } from '../registry/compile-definition.ts';
import { forwardSession } from '../session/forward-session.ts';
import type { Session } from '../session/session.ts';
import type { EdgeStore } from '../store/edge-store.ts';
import type { StudioRule } from '../studio/studio-rule.ts';
import { findingLine } from './check-command.ts';
import { loadEdgeModuleConfig } from './load-config.ts';
import type { ServeConfig } from './serve-config.ts';

/** Options of `analytics-edge serve`, as parsed from the command line. */
export interface ServeOptions {
  config?: string | undefined;
  port?: string | undefined;
  host?: string | undefined;
  basePath?: string | undefined;
}

/** How long the start-up check of the config may take before it gives up. */
const CHECK_TIMEOUT_MS = 10_000;

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
  const { session: configured, publicUrl: filePublicUrl, admins, studioRule, ...settings } = config;
  // As for `analytics-edge sign`: EDGE_PUBLIC_URL first, then the file's publicUrl.
  const publicUrl = env.EDGE_PUBLIC_URL?.trim() || filePublicUrl;
  const store = await storeFrom(env);
  const subjects = new Set(admins?.subjects ?? []);
  const admin =
    settings.admin ?? (subjects.size ? (s: Session) => subjects.has(s.subject) : undefined);
  const studio = settings.studio ?? (studioRule ? studioFromJson(studioRule) : undefined);
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
      ...(studio ? { studio } : {}),
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
  warnAboutCollections(edgeConfig.backend, compileRegistry(config.queries), path);
  const stop = () => {
    served
      .close()
      .then(() => store?.close())
      .then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/**
 * Warns on stderr, without delaying start-up, about queries that read a collection the workspace
 * does not have: the service answers those with empty charts and status 200, so nothing else
 * would tell. The full check (every query run, every field looked for) is `analytics-edge check`.
 */
function warnAboutCollections(
  backend: Backend,
  registry: ReturnType<typeof compileRegistry>,
  configPath: string,
): void {
  if (!backend.collections || registry.size === 0) return;
  checkDefinitions(registry, backend, {
    run: false,
    fields: false,
    signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
  }).then(
    (findings) => {
      for (const finding of findings) {
        process.stderr.write(`analytics-edge: warning: ${findingLine(finding).slice(2)}\n`);
      }
      if (findings.length) {
        process.stderr.write(
          `analytics-edge: warning: analytics-edge check --config ${configPath} checks every query\n`,
        );
      }
    },
    (error: unknown) => {
      // A check that cannot finish must not stop a server that otherwise runs.
      process.stderr.write(
        `analytics-edge: warning: the config could not be checked: ${(error as Error).message}\n`,
      );
    },
  );
}

/** The studio rule of a JSON config: listed subjects (or every session) and the queries offered. */
function studioFromJson(rule: NonNullable<ServeConfig['studioRule']>): StudioRule {
  const subjects = rule.subjects === '*' ? undefined : new Set(rule.subjects);
  return {
    allow: (session: Session) => subjects === undefined || subjects.has(session.subject),
    ...(rule.queries ? { queries: rule.queries } : {}),
  };
}
