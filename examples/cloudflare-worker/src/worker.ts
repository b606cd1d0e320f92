/**
 * The edge on Cloudflare Workers: the query registry of `queries.ts`, the element
 * bundle baked into the Worker, the HTTP backend to the analytics service (built by the adapter
 * from `ANALYTICS_BASE_URL` and the `ANALYTICS_API_KEY` secret), and the host's session cookie
 * as the session check, and rate limits shared by all of the Worker's isolates (a Durable Object).
 * Mounted at `/analytics`, like the host app mounts it on Node.
 */
import { createWorker, jwtSession } from '@analytics-chart/edge/workers';
import bundle from '@analytics-chart/element/analytics-chart.js';
import { WORKER_QUERIES } from './queries.ts';

export default createWorker(
  (env) => ({
    queries: WORKER_QUERIES,
    bundle,
    authorize: jwtSession({ secret: String(env.SESSION_SECRET ?? ''), cookie: 'session' }),
  }),
  { basePath: '/analytics' },
);

// The rate limiter every isolate of the Worker shares (bound as EDGE_RATE_LIMITER in
// wrangler.toml): Durable Object classes are exported by the main module.
export { RateLimiterObject } from '@analytics-chart/edge/workers';
