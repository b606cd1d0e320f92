/** The module worker the workerd suites run: the Workers adapter with the suite's config. */
import { createWorker } from '../../src/adapter/workers/index.ts';
import { testEdgeOverrides } from './test-config.ts';

export default createWorker(testEdgeOverrides, { basePath: '/analytics' });

// Durable Object classes must be exported by the Worker's main module.
export { RateLimiterObject } from '../../src/adapter/workers/durable-rate-limit.ts';

/** A limiter that is down (as during a deploy or an overload): the edge must let requests through. */
export class UnavailableRateLimiter {
  async fetch(): Promise<Response> {
    return new Response('overloaded', { status: 503 });
  }
}
