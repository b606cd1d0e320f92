/**
 * The edge as a Cloudflare Workers module worker. Secrets come from the Worker's bindings
 * (`wrangler secret put ANALYTICS_API_KEY`, `EDGE_SIGNING_KEYS`); the registry and hooks from
 * code. The edge is built on the first request and reused while the isolate lives. With a
 * Durable Object binding `EDGE_RATE_LIMITER` (class {@link RateLimiterObject}, exported from the
 * Worker's main module), rate limits hold across all of the Worker's isolates; with a KV binding
 * `EDGE_REVOCATIONS`, ids whose `jti` is a key there are refused (see {@link kvRevocationCheck});
 * with a D1 binding `EDGE_REGISTRY`, minted ids are recorded there for the admin API, and a
 * revocation there is refused by every isolate within a second (see {@link d1RevocationCheck};
 * it is also written to `EDGE_REVOCATIONS` when bound).
 *
 * @example
 * // worker.ts
 * import { createWorker, jwtSession } from '@analytics-chart/edge/workers';
 * import bundle from '@analytics-chart/element/dist/analytics-chart.js?raw';
 * export default createWorker((env) => ({
 *   queries,
 *   bundle,
 *   authorize: jwtSession({ secret: String(env.SESSION_SECRET) }),
 * }), { basePath: '/analytics' });
 */
import type { Hono } from 'hono';
import { type EdgeEnv, edgeConfigFromEnv } from '../../config/config-from-env.ts';
import type { EdgeConfig } from '../../config/edge-config.ts';
import { createEdge, type Edge } from '../../create-edge.ts';
import { mountEdge } from '../../http/mount-edge.ts';
import { jsonResponse } from '../../http/respond.ts';
import {
  d1RevocationCheck,
  d1Store,
  type RegistryDatabase,
  type RevocationWriter,
} from './d1-store.ts';
import { durableObjectRateLimitStore, type RateLimiterNamespace } from './durable-rate-limit.ts';
import { kvRevocationCheck, type RevocationNamespace } from './kv-revocation.ts';

/** Options of {@link createWorker}. */
export interface WorkerOptions {
  /** Where the edge is mounted, e.g. `/analytics`; the bundle and API sit under it. @default '' */
  basePath?: string;
}

/** The code-side part of the config, computed from the bindings (for hooks that need secrets). */
export type WorkerConfigure = (env: EdgeEnv) => Partial<EdgeConfig> & Pick<EdgeConfig, 'queries'>;

/** The module worker shape: `export default { fetch }`. */
export interface EdgeWorker {
  fetch(request: Request, env: EdgeEnv, ctx?: unknown): Promise<Response>;
}

/**
 * Builds a module worker serving the edge. A configuration error (missing secret, broken
 * definition) is logged once and answered as a 500 JSON error on every request, never as a
 * stack trace.
 */
export function createWorker(configure: WorkerConfigure, options: WorkerOptions = {}): EdgeWorker {
  let built: { env: EdgeEnv; app: Hono; edge: Edge } | { env: EdgeEnv; error: string } | undefined;

  function build(env: EdgeEnv) {
    if (built?.env === env) return built;
    try {
      const overrides = configure(env);
      const limiter = binding<RateLimiterNamespace>(
        env,
        'EDGE_RATE_LIMITER',
        'a Durable Object namespace',
        ['idFromName', 'get'],
      );
      const rateLimit =
        limiter && !overrides.rateLimit?.store
          ? {
              ...overrides.rateLimit,
              store: durableObjectRateLimitStore(limiter, { log: overrides.log }),
            }
          : overrides.rateLimit;
      const revocations = binding<RevocationNamespace>(env, 'EDGE_REVOCATIONS', 'a KV namespace', [
        'get',
      ]);
      const registry = binding<RegistryDatabase>(env, 'EDGE_REGISTRY', 'a D1 database', [
        'prepare',
        'exec',
      ]);
      const isRevoked =
        overrides.isRevoked ??
        eitherRevoked(
          registry && !overrides.store ? d1RevocationCheck(registry) : undefined,
          revocations ? kvRevocationCheck(revocations) : undefined,
        );
      const writable =
        revocations && typeof (revocations as Partial<RevocationWriter>).put === 'function'
          ? (revocations as unknown as RevocationWriter)
          : undefined;
      const store = overrides.store ?? (registry ? d1Store(registry, writable) : undefined);
      const edge = createEdge(
        edgeConfigFromEnv(env, {
          clientIp: (c) => c.req.header('cf-connecting-ip'),
          ...overrides,
          rateLimit,
          isRevoked,
          ...(store ? { store } : {}),
        }),
      );
      built = { env, app: mountEdge(edge, options.basePath), edge };
    } catch (error) {
      console.error(
        JSON.stringify({ level: 'error', event: 'edge.config', message: (error as Error).message }),
      );
      built = { env, error: (error as Error).message };
    }
    return built;
  }

  return {
    async fetch(request, env, ctx) {
      const state = build(env);
      if ('error' in state) {
        return jsonResponse({ error: 'The analytics edge is misconfigured; see its log.' }, 500);
      }
      return state.app.fetch(request, env, ctx as never);
    },
  };
}

type RevocationCheck = (jti: string) => boolean | Promise<boolean>;

/** Revoked in the registry (D1, asked first: its answers are remembered) or in the KV namespace. */
function eitherRevoked(
  registry: RevocationCheck | undefined,
  namespace: RevocationCheck | undefined,
): RevocationCheck | undefined {
  if (!registry || !namespace) return registry ?? namespace;
  return (jti) => {
    const first = registry(jti);
    if (first === true) return true;
    if (first === false) return namespace(jti);
    return first.then((revoked) => revoked || namespace(jti));
  };
}

/** An optional binding of the kind named, or a configuration error that names it. */
function binding<T>(env: EdgeEnv, name: string, kind: string, methods: string[]): T | undefined {
  const value = env[name] as Record<string, unknown> | undefined;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || methods.some((m) => typeof value[m] !== 'function')) {
    throw new Error(`analytics edge: ${name} must be bound to ${kind}`);
  }
  return value as T;
}

export * from '../../index.ts';
export {
  type D1RevocationOptions,
  d1RevocationCheck,
  d1Store,
  type RegistryDatabase,
  type RevocationWriter,
} from './d1-store.ts';
export {
  type DurableRateLimitOptions,
  durableObjectRateLimitStore,
  type RateLimiterNamespace,
  RateLimiterObject,
} from './durable-rate-limit.ts';
export { kvRevocationCheck, type RevocationNamespace } from './kv-revocation.ts';
